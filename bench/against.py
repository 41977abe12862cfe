"""A bench's own figures against another commit's, in the same run: the current/base ratio of every number.

    .venv/bin/python bench/against.py --base REV [--rounds 2] -- bench/agent.py --stride 10
    .venv/bin/python bench/against.py --base REV -- bench/latency.py -n 1

REV goes into a temporary git worktree (removed at the end); the bench command runs alternately there and in this
tree (base, current, base, current, … for --rounds rounds, so drift and the other jobs on the machine hit both),
each time with this Python (the same virtual environment) and cwd and PYTHONPATH = that tree, so that tree's
hearthd is imported (in the base tree hearthd/locales and hearthd/systemd are links to its own locales/ and
systemd/, as the editable install maps them; a check fails loudly when a tree would import another's).

Prints the last run's output of each tree, then a table: each number both outputs have at the same place (a line
with the same text once its numbers are left out, in the same table, the same occurrence), labelled by its row and
column (or by its line, the number marked ‹#›), the median over the rounds in base and in current, current/base,
and with two rounds or more base's spread (± half its rounds' range, relative to its median), the noise a ratio is
read against. A ratio ~1.00 (within that spread; a few % for latency on a busy machine) is within noise. Accuracy
and count columns (ok and its `#2`, the cases; cases, tokens evaluated, restores, frames dropped) should match
exactly: `=` marks a number that was the same in every run of both trees. Numbers found in one output only (a line
whose text changed, a row one tree lacks) are counted at the end as "not paired". Randomness that would give the
two trees different input (Piper's) is pinned the same in both (PINNED, below).
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINKED = ("locales", "systemd")  # hearthd.<name> -> <tree>/<name> in the editable install

SEPARATORS = r"\s|/,;:()=\[\]"
TOKEN = re.compile(rf"[^{SEPARATORS}]+")
NUMBER = re.compile(r"([-+]?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?|nan|inf)(?:x|×|%|ms|s)?", re.IGNORECASE)
PIPE_RULE = re.compile(r"^\s*\|(\s*:?-{2,}:?\s*\|)+\s*$")
DASH_RULE = re.compile(r"^\s*[-=]{5,}\s*$")
MARK = "‹#›"


@dataclass
class Num:
    start: int  # where the number is in its line
    end: int
    value: float
    decimals: int


@dataclass
class Figure:
    label: str
    values: dict[str, list[float]] = field(default_factory=lambda: {"base": [], "current": []})
    decimals: int = 0


def numbers(line: str) -> list[Num]:
    out = []
    for tok in TOKEN.finditer(line):
        m = NUMBER.fullmatch(tok.group())
        if m:
            text = m.group(1)
            decimals = len(text.split(".")[1]) if "." in text and "e" not in text.lower() else 0
            out.append(Num(tok.start(), tok.start() + len(text), float(text), decimals))
    return out


def shape(line: str, nums: list[Num]) -> str:
    """The line with its numbers as #, runs of blanks as one: what pairs a line of one output with another's."""
    for n in reversed(nums):
        line = line[:n.start] + "#" + line[n.end:]
    return " ".join(line.split())


def row_label(line: str, nums: list[Num]) -> str:
    spans = [(n.start, n.end) for n in nums]
    words = [t.group() for t in TOKEN.finditer(line)
             if not any(s <= t.start() < e for s, e in spans) and not NUMBER.fullmatch(t.group())]
    return " ".join(w for w in words if w not in ("x", "×", "%", "ms", "s"))


def line_label(line: str, nums: list[Num], k: int, width: int = 64) -> str:
    """The line, its k-th number as ‹#› and the others as #, cut to width around the mark."""
    for i, n in reversed(list(enumerate(nums))):
        line = line[:n.start] + (MARK if i == k else "#") + line[n.end:]
    line = " ".join(line.split())
    at = line.index(MARK)
    if len(line) <= width:
        return line
    lo = max(0, min(at - width // 2, len(line) - width))
    return ("…" if lo else "") + line[lo:lo + width].strip() + ("…" if lo + width < len(line) else "")


def header_groups(header: str) -> list[tuple[int, int, str]]:
    """A fixed-width header's column names: words one blank apart are one name ("naive ok"), unless a word comes
    again ("hearthd ok hearthd ms" is two)."""
    groups: list[list[tuple[int, int, str]]] = []
    for m in re.finditer(r"\S+", header):
        last = groups[-1] if groups else None
        if last and m.start() - last[-1][1] == 1 and m.group() not in [w for _, _, w in last]:
            last.append((m.start(), m.end(), m.group()))
        else:
            groups.append([(m.start(), m.end(), m.group())])
    return [(g[0][0], g[-1][1], " ".join(w for _, _, w in g)) for g in groups]


def parse(text: str) -> list[tuple[tuple[str, str, int, int], str, float, int]]:
    """Every number of a bench's output: (key, label, value, decimals); the key pairs it with another output's."""
    lines = text.splitlines()
    out = []
    seen: dict[tuple[str, str], int] = {}
    kind = ""  # the table the line is in: "pipe" (markdown), "fixed" (a header over a rule of dashes) or none
    cells_header: list[str] = []
    groups: list[tuple[int, int, str]] = []
    count: int | None = None  # numbers in a fixed table's first row: a line with another count ends the table
    context = ""
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if PIPE_RULE.match(line) or DASH_RULE.match(line):
            continue
        if line.strip().startswith("|") and PIPE_RULE.match(nxt):
            kind, context = "pipe", shape(line, [])
            cells_header = [c.strip() for c in line.strip().strip("|").split("|")]
            continue
        if line.strip() and DASH_RULE.match(nxt):
            kind, context, groups, count = "fixed", shape(line, []), header_groups(line), None
            continue
        nums = numbers(line)
        if (kind == "pipe" and not line.strip().startswith("|")) or \
                (kind == "fixed" and (not line.strip() or (count is not None and len(nums) != count))):
            kind, context = "", ""
        elif kind == "fixed":
            count = len(nums)
        if not nums:
            continue
        s = shape(line, nums)
        occ = seen.get((context, s), 0)
        seen[(context, s)] = occ + 1
        columns: list[str] = []
        row = ""
        if kind == "pipe":
            bars = [m.start() for m in re.finditer(r"\|", line)]
            row = " ".join(c.strip() for c in line.strip().strip("|").split("|") if c.strip() and not numbers(c))
            for n in nums:
                cell = sum(b < n.start for b in bars) - 1
                columns.append(cells_header[cell] if 0 <= cell < len(cells_header) else f"column {cell + 1}")
        elif kind == "fixed":
            row = row_label(line, nums)
            for n in nums:
                over = [g for g in groups if g[0] < n.end and n.start < g[1]]
                mid = (n.start + n.end) / 2
                columns.append((over[0] if over else min(groups, key=lambda g: abs((g[0] + g[1]) / 2 - mid)))[2])
        for k, n in enumerate(nums):
            if columns:
                col = columns[k]
                nth = columns[:k].count(col)
                label = f"{row}{f' ({occ + 1})' if occ else ''} · {col}{f' #{nth + 1}' if nth else ''}"
            else:
                label = line_label(line, nums, k) + (f" ({occ + 1})" if occ else "")
            out.append(((context, s, occ, k), label, n.value, n.decimals))
    return out


def median(values: list[float]) -> float:
    real = [v for v in values if not math.isnan(v)]
    return statistics.median(real) if real else math.nan


def fmt(v: float, decimals: int) -> str:
    if math.isnan(v) or math.isinf(v):
        return str(v)
    return f"{v:.{decimals}f}" if round(v, decimals) == v else f"{v:.{decimals + 1}f}"


def git(*args: str) -> str:
    done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"against: git {shlex.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


def tree_env(tree: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tree), *filter(None, [os.environ.get("PYTHONPATH")])])
    return env


def check_imports(tree: Path) -> None:
    """hearthd (and hearthd.locales, hearthd.systemd where the tree has them) must come from this tree."""
    names = ["hearthd"] + [f"hearthd.{n}" for n in LINKED if (tree / n / "__init__.py").exists()]
    code = ("import importlib, sys\nfor n in sys.argv[1:]:\n    m = importlib.import_module(n)\n"
            "    print(n, *(getattr(m, '__path__', None) or [m.__file__]), sep='\\t')")
    got = subprocess.run([sys.executable, "-c", code, *names], cwd=tree, env=tree_env(tree),
                         capture_output=True, text=True)
    if got.returncode:
        sys.exit(f"against: importing hearthd in {tree} failed:\n{got.stderr}")
    for row in got.stdout.splitlines():
        name, *paths = row.split("\t")
        for p in paths:
            if not Path(p).resolve().is_relative_to(tree.resolve()):
                sys.exit(f"against: in {tree}, {name} is imported from {p}, not from that tree "
                         f"(a tree other than the editable install's needs hearthd/<name> -> ../<name> links)")


# The bench's input must be the same in both trees: Piper draws each utterance's variation (its noise inputs) from
# onnxruntime's random generator, so an unpinned synthesis of the same text differs from run to run (±1.5 % in
# length, as measured), and a model-path figure then compares two different recordings. The script
# runs as `python script.py` would, onnxruntime's seed set first, before any session exists (a seed set later
# does not give the same draws), so a tree that does not pin it itself (an older commit) gets the same audio.
PINNED = """import runpy, sys
try:
    import onnxruntime
    onnxruntime.set_seed(0)
except ImportError:
    pass
script = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path[0] = __import__("os").path.dirname(__import__("os").path.abspath(script))
runpy.run_path(script, run_name="__main__")
"""


def run_once(tree: Path, cmd: list[str], what: str, echo: bool) -> str:
    started = time.monotonic()
    print(f"against: {what}: {shlex.join(cmd)} …", file=sys.stderr, flush=True)
    argv = ["-c", PINNED, *cmd] if cmd and cmd[0].endswith(".py") else cmd
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen([sys.executable, *argv], cwd=tree, env=tree_env(tree), stdout=subprocess.PIPE,
                                stderr=err, text=True)
        assert proc.stdout is not None
        out = []
        for line in proc.stdout:
            out.append(line)
            if echo:
                print(f"  {line}", end="", file=sys.stderr, flush=True)
        rc = proc.wait()
        if rc:
            err.seek(0)
            tail = "".join(err.readlines()[-40:])
            sys.exit(f"against: {what} exited {rc}\n--- stdout ---\n{''.join(out)}--- stderr (tail) ---\n{tail}")
    print(f"against: {what}: {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    return "".join(out)


def compare(outputs: dict[str, list[str]]) -> tuple[list[Figure], dict[str, int]]:
    figures: dict[tuple[str, str, int, int], Figure] = {}
    order: list[tuple[str, str, int, int]] = []
    keys = {"base": set(), "current": set()}  # type: dict[str, set[tuple[str, str, int, int]]]
    for side in ("current", "base"):
        for text in outputs[side]:
            for key, label, value, decimals in parse(text):
                keys[side].add(key)
                if key not in figures:
                    figures[key] = Figure(label)
                    order.append(key)
                fig = figures[key]
                fig.values[side].append(value)
                fig.decimals = max(fig.decimals, decimals)
    paired = [figures[k] for k in order if k in keys["base"] and k in keys["current"]]
    unpaired = {side: len(keys[side] - keys[other]) for side, other in (("base", "current"), ("current", "base"))}
    return paired, unpaired


def table(paired: list[Figure], rounds: int) -> list[str]:
    width = min(72, max([len(f.label) for f in paired] + [5]))
    head = f"{'figure':<{width}}  {'base':>10}  {'current':>10}  {'cur/base':>8}"
    head += f"  {'base spread':>11}" if rounds > 1 else ""
    lines = [head, "-" * len(head)]
    for f in paired:
        b, c = median(f.values["base"]), median(f.values["current"])
        same = len(set(f.values["base"] + f.values["current"])) == 1
        if same:
            ratio = "="
        elif b == 0 or math.isnan(b) or math.isnan(c):
            ratio = "-"
        else:
            ratio = f"{c / b:.3f}"
        label = f.label if len(f.label) <= width else f.label[:width - 1] + "…"
        row = f"{label:<{width}}  {fmt(b, f.decimals):>10}  {fmt(c, f.decimals):>10}  {ratio:>8}"
        if rounds > 1:
            base = [v for v in f.values["base"] if not math.isnan(v)]
            spread = (max(base) - min(base)) / abs(b) if base and b and not math.isnan(b) else math.nan
            row += f"  {'' if same or math.isnan(spread) else f'±{100 * spread / 2:.1f} %':>11}"
        lines.append(row.rstrip())
    return lines


def main() -> int:
    argv = sys.argv[1:]
    at = argv.index("--") if "--" in argv else len(argv)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="the commit to compare against (any git revision)")
    ap.add_argument("--rounds", type=int, default=2, help="base/current pairs of runs (medians over them)")
    ap.add_argument("--echo", action="store_true", help="show each run's output as it comes (on stderr)")
    args = ap.parse_args(argv[:at])
    cmd = argv[at + 1:]
    if not cmd:
        ap.error("no bench command: --base REV [--rounds N] -- BENCH.py [ARGS…]")
    sha = git("rev-parse", "--verify", f"{args.base}^{{commit}}")
    head = git("rev-parse", "--short", "HEAD")
    dirty = " + uncommitted changes" if git("status", "--porcelain", "--untracked-files=no") else ""
    tmp = Path(tempfile.mkdtemp(prefix="hearthd-against-"))
    base_tree = tmp / "base"
    try:
        git("worktree", "add", "--detach", str(base_tree), sha)
        for name in LINKED:
            link = base_tree / "hearthd" / name
            if (base_tree / name).is_dir() and (base_tree / "hearthd").is_dir() and not link.exists():
                link.symlink_to(Path("..") / name)
        if not (base_tree / cmd[0]).exists():
            sys.exit(f"against: {cmd[0]} is not in {args.base} ({sha[:10]})")
        check_imports(base_tree)
        check_imports(ROOT)
        trees = {"base": base_tree, "current": ROOT}
        outputs: dict[str, list[str]] = {"base": [], "current": []}
        for r in range(args.rounds):
            for side in ("base", "current"):
                what = f"round {r + 1}/{args.rounds}, {side}"
                outputs[side].append(run_once(trees[side], cmd, what, args.echo))
    finally:
        with_tree = subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base_tree)],
                                   capture_output=True, text=True)
        if with_tree.returncode and base_tree.exists():
            print(f"against: git worktree remove: {with_tree.stderr.strip()}", file=sys.stderr)
        shutil.rmtree(tmp, ignore_errors=True)
        subprocess.run(["git", "-C", str(ROOT), "worktree", "prune"], capture_output=True)
    if git("rev-parse", "--short", "HEAD") != head:
        print(f"against: this tree's HEAD moved from {head} to {git('rev-parse', '--short', 'HEAD')} during the runs: "
              "the current runs may not all be of the same code", file=sys.stderr)
    print(f"=== base: {args.base} ({sha[:10]}), last run: {shlex.join(cmd)}")
    print(outputs["base"][-1].rstrip("\n"))
    print(f"\n=== current: {ROOT} ({head}{dirty}), last run")
    print(outputs["current"][-1].rstrip("\n"))
    paired, unpaired = compare(outputs)
    print(f"\n=== current/base, medians over {args.rounds} round{'s' * (args.rounds > 1)} "
          f"(base {sha[:10]}, current {head}{dirty})")
    print("\n".join(table(paired, args.rounds)))
    if unpaired["base"] or unpaired["current"]:
        print(f"not paired: {unpaired['base']} number(s) only in base, {unpaired['current']} only in current "
              "(lines that changed their text, or rows that are in one output only)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
