"""State that is the user's alone: directories 0700 and files 0600, never looser than the user made them."""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import stat
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

log = logging.getLogger(__name__)

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
    # Never open an existing store: closing any descriptor of a file drops every POSIX lock this process holds on
    # it, SQLite's included, and another connection in the process then fails ("disk I/O error").
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
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


def move_aside(path: Path, why: str) -> Path:
    """A corrupt store kept, not lost: renamed to `<name>.corrupt-<UTC timestamp>` (0600 kept), with a warning that
    names the copy, so a fresh store can take its place. SQLite's -wal/-shm/-journal files go with it."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    kept = path.with_name(f"{path.name}.corrupt-{stamp}")
    n = 1
    while kept.exists():  # two in the same second: neither overwrites the other
        kept, n = path.with_name(f"{path.name}.corrupt-{stamp}-{n}"), n + 1
    os.replace(path, kept)
    private_file(kept)
    for suffix in ("-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.replace(path.with_name(path.name + suffix), kept.with_name(kept.name + suffix))
    log.warning("%s is corrupt (%s): kept as %s, starting a fresh one", path, why, kept)
    return kept


# SQLITE_CORRUPT, SQLITE_NOTADB: the file is damaged or no database at all. Anything else (SQLITE_BUSY/LOCKED — the
# store is merely in use — SQLITE_CANTOPEN, SQLITE_IOERR, SQLITE_READONLY, ...) is not corruption: the file stays.
_CORRUPT_CODES = {11, 26}
_CORRUPT_WORDS = ("file is not a database", "database disk image is malformed")


class _Malformed(sqlite3.DatabaseError):
    """`PRAGMA quick_check` found damage SQLite had not raised on."""


def _is_corrupt(e: sqlite3.DatabaseError) -> bool:
    code = getattr(e, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in _CORRUPT_CODES
    return any(w in str(e) for w in _CORRUPT_WORDS)


class PrivateStore:
    """What `open_sqlite` found: `moved_aside` is the kept copy of a corrupt store (None when it was sound),
    `was_empty` says a 0-byte file stood where a database was expected (treated as new, reported)."""

    def __init__(self) -> None:
        self.moved_aside: Path | None = None
        self.was_empty = False


def open_sqlite(path: Path | None, setup: Callable[[sqlite3.Connection], None],
                found: PrivateStore | None = None) -> sqlite3.Connection:
    """An SQLite store at `path` (None: in memory), private (0700 directory, 0600 files), `setup` run on it.
    A store SQLite calls corrupt (on open, in `setup`, or by `PRAGMA quick_check`) is moved aside and a fresh one
    made; a locked/busy one raises as before and is left alone. A 0-byte file is used as a new store, with a
    warning. `found`, when given, records which of these happened."""
    found = found or PrivateStore()

    def connect() -> sqlite3.Connection:
        db = sqlite3.connect(str(path) if path else ":memory:", check_same_thread=False, isolation_level=None)
        try:
            setup(db)
            if path is not None:
                rows = db.execute("PRAGMA quick_check").fetchall()
                if rows != [("ok",)]:
                    raise _Malformed("PRAGMA quick_check: " + "; ".join(str(r[0]) for r in rows[:3]))
        except BaseException:
            db.close()
            raise
        return db

    if path is None:
        return connect()
    private_dir(path.parent)
    with contextlib.suppress(FileNotFoundError):
        wal = path.with_name(path.name + "-wal")
        if path.stat().st_size == 0 and not (wal.exists() and wal.stat().st_size > 0):
            found.was_empty = True
            log.warning("%s is an empty file where a database was expected: starting a new one", path)
    create_private(path)
    try:
        db = connect()
    except sqlite3.DatabaseError as e:
        if not (isinstance(e, _Malformed) or _is_corrupt(e)):
            raise
        found.moved_aside = move_aside(path, str(e))
        create_private(path)
        db = connect()
    private_sqlite(path)  # -wal/-shm left looser by an older hearthd
    return db


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
