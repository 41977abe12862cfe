"""How many cores are free for one inference: the cores this process may run on, less what others use now.

A thread pool sized to every core on a machine whose cores are busy elsewhere makes each batch wait for its
slowest thread (one that shares a core with someone else's work). Sized to the free cores, every thread has a
core. `agent.threads = 0` and `stt.threads = 0` mean this.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from pathlib import Path

SAMPLE_S = 0.05  # a short fresh sample when no reading of the last second is at hand
MIN_SPAN_S = 0.1  # /proc/stat counts in clock ticks (10 ms): a shorter span is noise
STAT = Path("/proc/stat")


def allowed_cores() -> set[int]:
    """The CPUs this process may run on (its affinity; all of them where that cannot be read)."""
    try:
        return set(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return set(range(os.cpu_count() or 1))


def _busy_ticks(cores: set[int], stat: Path = STAT) -> tuple[int, int] | None:
    """(busy, total) clock ticks summed over `cores` since boot, from /proc/stat; None where it is unreadable."""
    busy = total = 0
    try:
        lines = stat.read_text().splitlines()
    except OSError:
        return None
    seen = False
    for line in lines:
        name, _, rest = line.partition(" ")
        if not name.startswith("cpu") or name == "cpu" or not name[3:].isdigit() or int(name[3:]) not in cores:
            continue
        fields = [int(v) for v in rest.split()]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
        used = sum(fields[:8])  # user nice system idle iowait irq softirq steal (guest is inside user)
        busy += used - idle
        total += used
        seen = True
    return (busy, total) if seen else None


def _own_cpu_s() -> float:
    """CPU seconds this process (all its threads) has used."""
    return time.process_time()


class FreeCores:
    """Counts the cores free for this process from the busy time of the others over the last second or so: a
    background thread reads /proc/stat a few times a second (microseconds each), so asking costs nothing."""

    def __init__(self, stat: Path = STAT, every_s: float = 0.25, window_s: float = 1.0) -> None:
        self.stat = stat
        self.every_s = every_s
        self.window_s = window_s
        self._lock = threading.Lock()
        self._readings: deque[tuple[float, int, int, float]] = deque(maxlen=max(2, int(4 * window_s / every_s)))
        self._sampler: threading.Thread | None = None

    def _read(self, cores: set[int]) -> tuple[float, int, int, float] | None:
        """(monotonic, busy ticks, total ticks, this process's CPU seconds)."""
        ticks = _busy_ticks(cores, self.stat)
        if ticks is None:
            return None
        return time.monotonic(), ticks[0], ticks[1], _own_cpu_s()

    def _sample(self) -> None:
        while True:
            reading = self._read(allowed_cores())
            if reading is not None:
                with self._lock:
                    self._readings.append(reading)
            time.sleep(self.every_s)

    def count(self) -> int:
        """The free cores now, at least 1 (all allowed cores where /proc/stat cannot be read)."""
        cores = allowed_cores()
        now = self._read(cores)
        if now is None:
            return max(1, len(cores))
        with self._lock:
            if self._sampler is None:
                self._sampler = threading.Thread(target=self._sample, name="hearthd-free-cores", daemon=True)
                self._sampler.start()
            # the oldest reading within the window, at least MIN_SPAN_S ago
            past = [r for r in self._readings if MIN_SPAN_S <= now[0] - r[0] <= self.window_s]
        if past:
            last = past[0]
        else:  # just started, or asked before the sampler had a reading: a short sample now
            time.sleep(SAMPLE_S)
            last, now = now, self._read(cores) or now
        return free_from(len(cores), now[1] - last[1], now[2] - last[2], now[3] - last[3], now[0] - last[0])


def free_from(n_cores: int, busy_ticks: int, total_ticks: int, own_cpu_s: float, span_s: float) -> int:
    """Free cores given, over one span, the busy and total ticks of the allowed cores and this process's CPU time."""
    if total_ticks <= 0 or span_s <= 0:
        return max(1, n_cores)
    busy_cores = n_cores * busy_ticks / total_ticks
    others = max(0.0, busy_cores - own_cpu_s / span_s)
    return max(1, min(n_cores, int(n_cores - others + 0.5)))


FREE = FreeCores()


def threads_for(configured: int) -> int:
    """`configured` threads, or with 0 the cores free now."""
    return configured if configured > 0 else FREE.count()
