"""Loading a model never takes the daemon's output away: llama-cpp-python silences a load by pointing the process's
fds 1 and 2 at /dev/null, which hid every trace line and log written meanwhile by other threads, and two loads at
once left them there for good (the daemon's log and --json trace vanished after its first model turn)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.models

SCRIPT = r"""
import os, sys, threading, time
from pathlib import Path
from hearthd.agent.model import ChatModel
from hearthd.config import AgentConfig

path = Path(sys.argv[1])
cfg = AgentConfig(threads=1)
loaded = []
threads = [threading.Thread(target=lambda: loaded.append(ChatModel(path, cfg))) for _ in range(2)]
for t in threads:
    t.start()
ticks = 0
while any(t.is_alive() for t in threads) or ticks < 5:
    ticks += 1
    os.write(1, f"tick {ticks}\n".encode())
    os.write(2, f"warn {ticks}\n".encode())
    time.sleep(0.005)
for t in threads:
    t.join()
print(f"loaded {len(loaded)} ticks {ticks}", flush=True)
print("stderr still here", file=sys.stderr, flush=True)
"""


def test_output_written_while_models_load_is_never_lost(default_model_gguf: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(default_model_gguf)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith("loaded 2 ticks "), proc.stdout[-500:]
    ticks = int(last.split()[-1])
    assert proc.stdout.count("tick ") == ticks  # every line written during the loads reached stdout
    assert proc.stderr.count("warn ") == ticks
    assert "stderr still here" in proc.stderr
    assert "llama_model_loader" not in proc.stderr and "llm_load" not in proc.stderr  # still quiet
    assert not [line for line in proc.stderr.splitlines() if line.startswith(("load:", "llama_", "print_info"))]
