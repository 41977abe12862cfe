"""llama-cpp-python's inference server (`python -m llama_cpp.server`) started on 127.0.0.1 with a GGUF, for the
tests and bench/agent.py: the agent's prompts on one, the relevance check's on a second (each keeps its prompt's
prefix evaluated). What a user runs on another machine is the same command (README: The agent on another machine).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def command(model: Path, port: int, n_ctx: int, threads: int) -> list[str]:
    """The server's command line: logits of every position kept (`--logits_all`, what token probabilities need)."""
    return [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1", "--port",
            str(port), "--n_ctx", str(n_ctx), "--n_threads", str(threads), "--n_threads_batch", str(threads),
            "--logits_all", "true", "--cache", "false"]


@contextlib.contextmanager
def llama_server(model: Path, n_ctx: int = 4096, threads: int = 1, log: Path | None = None,
                 timeout_s: float = 120.0) -> Iterator[str]:
    """A llama_cpp.server on a free loopback port for the `with` block: its http://127.0.0.1:PORT once it answers.
    Stopped (and waited for) when the block ends."""
    port = free_port()
    out = open(log, "wb") if log is not None else subprocess.DEVNULL  # noqa: SIM115 - closed below
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    proc = subprocess.Popen(command(model, port, n_ctx, threads), stdout=out, stderr=subprocess.STDOUT, env=env)
    uri = f"http://127.0.0.1:{port}"
    try:
        end = time.monotonic() + timeout_s
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {proc.returncode} (is llama-cpp-python[server] "
                                   "installed?)")
            try:
                with urllib.request.urlopen(uri + "/v1/models", timeout=2) as r:  # noqa: S310 - loopback
                    json.loads(r.read())
                break
            except OSError:
                if time.monotonic() > end:
                    raise RuntimeError(f"llama_cpp.server did not answer within {timeout_s:.0f} s") from None
                time.sleep(0.3)
        yield uri
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if log is not None and hasattr(out, "close"):
            out.close()
