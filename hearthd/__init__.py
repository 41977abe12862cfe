"""hearthd: a private voice assistant daemon that runs on your own machine."""

import contextlib
import ctypes
import os
import sys

__version__ = "0.1.0"

# llama.cpp (and CTranslate2) wait for their OpenMP threads by spinning. On a machine whose cores are busy with
# anything else — the desktop, a build, whisper beside the model — that spinning turns every batch into a fight
# for the cores: measured on 2 cores with one core busy, a model turn took 1.1 s (spinning) against 0.57 s
# (sleeping), with both busy 4.7 s against 1.3 s; idle, sleeping costs ~25% (0.30 s against 0.37 s). A daemon
# that shares the machine all day takes the bounded worst case. Set OMP_WAIT_POLICY yourself to choose otherwise;
# it must be set before the libraries load, so it is set here.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# onnxruntime (Piper's voices, the silero VAD) ships with Microsoft's telemetry on: importing it writes a device
# id and an event queue under ~/.cache/Microsoft/DeveloperTools/.onnxruntime/, to be uploaded later. Nothing
# hearthd hears or does leaves the machine, so it is switched off here, before anything can load the library
# (the variable is read once, when onnxruntime initialises; hearthd.private.no_telemetry also turns events off).
os.environ["ORT_DISABLE_TELEMETRY"] = "1"


def _few_malloc_arenas(arenas: int = 2) -> None:
    """glibc gives each thread that allocates at once its own heap ("arena", up to 8 per core) and keeps what each
    arena once held: hearthd's worker threads (speech, the model, the voices, MQTT) each grew one to its peak, and a
    daemon that had answered hostile traffic twice held ~250 MB more than one limited to two arenas (measured with
    tests/test_hostile.py's messages; the same replies, no slower). MALLOC_ARENA_MAX, when set, is glibc's own
    choice and wins; elsewhere than glibc this does nothing."""
    if os.environ.get("MALLOC_ARENA_MAX") or not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).mallopt(-8, arenas)  # M_ARENA_MAX


_few_malloc_arenas()
