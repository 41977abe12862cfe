"""Progress of long copies, downloads and hashes: the callback type, and the display the CLI prints."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

ProgressCallback = Callable[[str, int, int], None]
"""Called as (label, bytes done, bytes total) while a long copy, download or hash runs."""


def human(n: int) -> str:
    """A byte count for people: `12.3 MB`, or `4.5 kB` below a megabyte."""
    return f"{n / 1e6:.1f} MB" if n >= 1_000_000 else f"{n / 1e3:.1f} kB"


def make_progress_printer(stream: TextIO | None = None) -> ProgressCallback:
    """A progress display for long copies (default stderr): a bar on a terminal, else a line every 10%."""
    if stream is None:
        stream = sys.stderr
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    last: dict[str, int] = {}
    width = 30

    def show(label: str, done: int, total: int) -> None:
        if total <= 0:
            return
        done = min(done, total)
        finished = done >= total
        if tty:
            pct = done * 100 // total
            if last.get(label) == pct and not finished:
                return
            last[label] = pct
            filled = width * done // total
            bar = "#" * filled + "." * (width - filled)
            stream.write(f"\r{label} [{bar}] {pct:3d}% {human(done)}/{human(total)}")
            if finished:
                stream.write("\n")
                last.pop(label, None)
        else:
            step = done * 10 // total
            if last.get(label, -1) >= step:
                return
            last[label] = step
            stream.write(f"{label}: {step * 10}% ({human(done)}/{human(total)})\n")
            if finished:
                last.pop(label, None)
        stream.flush()

    return show
