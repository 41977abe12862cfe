"""State that is the user's alone: directories 0700 and files 0600, never looser than the user made them."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

_OTHERS = stat.S_IRWXG | stat.S_IRWXO  # 0o077: everything a group or other users could do


def private_dir(path: Path) -> Path:
    """`path` as a directory only its owner can enter: created 0700, an existing one loses its group/other bits."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    _tighten(path)
    return path


def private_file(path: Path) -> None:
    """An existing file loses its group/other bits (a missing one is left missing); the owner's bits stay."""
    with contextlib.suppress(FileNotFoundError):
        _tighten(path)


def create_private(path: Path) -> None:
    """The file exists and is 0600 (or tighter): created so when missing, tightened when it was looser."""
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
    private_file(path)


def open_private(path: Path, flags: int) -> int:
    """os.open of a file created 0600; an existing looser one is tightened through its descriptor."""
    fd = os.open(path, flags | os.O_CREAT, 0o600)
    mode = os.fstat(fd).st_mode
    if mode & _OTHERS:
        os.fchmod(fd, stat.S_IMODE(mode) & ~_OTHERS)
    return fd


def private_sqlite(path: Path) -> None:
    """An SQLite database and its -wal/-shm/-journal files, 0600 (SQLite gives those its database's mode)."""
    for name in (path, *(path.with_name(path.name + s) for s in ("-wal", "-shm", "-journal"))):
        private_file(name)


def _tighten(path: Path) -> None:
    mode = os.stat(path).st_mode
    if mode & _OTHERS:
        os.chmod(path, stat.S_IMODE(mode) & ~_OTHERS)


def no_telemetry() -> None:
    """onnxruntime's telemetry off, before an InferenceSession is made (hearthd/__init__ has already set
    ORT_DISABLE_TELEMETRY, which keeps the device id and event queue from being created at all)."""
    os.environ["ORT_DISABLE_TELEMETRY"] = "1"
    import onnxruntime

    onnxruntime.disable_telemetry_events()
