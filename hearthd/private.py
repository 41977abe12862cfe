"""State that is the user's alone: directories 0700 and files 0600, never looser than the user made them."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import sqlite3
import stat
import urllib.parse
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

from .errors import HearthdError

log = logging.getLogger(__name__)

_OTHERS = stat.S_IRWXG | stat.S_IRWXO  # 0o077: everything a group or other users could do


def private_dir(path: Path) -> Path:
    """`path` as a directory only its owner can enter: created 0700, an existing one loses its group/other bits.
    A file, a broken link or a loop of links in its place is a StateWriteError saying so (not "[Errno 17]")."""
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
    except (FileExistsError, NotADirectoryError, OSError) as e:
        problem = dir_problem(path)
        if problem:
            raise StateWriteError("state-unwritable", f"cannot keep state in {path}: {problem}") from None
        raise StateWriteError("state-unwritable", f"cannot keep state in {path}: {e.strerror or e}") from None
    _tighten(path)
    return path


STORES = ("alarms.db", "audit.jsonl", "devices.json", "requests.db", "settings.json")  # what the state dir holds


def dir_problem(path: Path) -> str:
    """What stands where a state directory should be ("" when it is a directory or nothing is there yet)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        parent = next((p for p in path.parents if os.path.lexists(p)), None)
        return dir_problem(parent) if parent is not None and parent != path and not parent.is_dir() else ""
    except OSError as e:
        return f"it cannot be looked at ({e.strerror})"
    if stat.S_ISLNK(st.st_mode):
        try:
            target = os.stat(path)
        except OSError as e:
            if e.errno == errno.ENOENT:
                return "a broken symbolic link"
            return f"a symbolic link that cannot be followed ({e.strerror})"
        return "" if stat.S_ISDIR(target.st_mode) else "a symbolic link to something that is not a directory"
    return "" if stat.S_ISDIR(st.st_mode) else "a file is in the way, not a directory"


def state_problems(where: Path) -> list[str]:
    """Why state under `where` cannot be kept or read: the directory itself, then each store that is a symbolic
    link, not a file, or cannot be read and written by this user."""
    problem = dir_problem(where)
    if problem:
        return [f"{where}: {problem}"]
    out = []
    for name in STORES:
        path = where / name
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            continue
        except OSError as e:
            out.append(f"{path}: {e.strerror}")
            continue
        if stat.S_ISLNK(st.st_mode):
            out.append(f"{path} is a symbolic link; hearthd keeps its state only in its own files")
        elif not stat.S_ISREG(st.st_mode):
            out.append(f"{path} is not a regular file")
        elif not os.access(path, os.R_OK | os.W_OK):
            out.append(f"{path} cannot be read and written by this user")
    return out


def private_file(path: Path) -> None:
    """An existing file loses its group/other bits (a missing one is left missing); the owner's bits stay. A
    symbolic link is left as it is: its target is some other file, never chmodded through it."""
    with contextlib.suppress(FileNotFoundError):
        _tighten(path, follow=False)


def create_private(path: Path) -> None:
    """The file exists and is 0600 (or tighter): created so when missing, tightened when it was looser."""
    # Never open an existing store: closing any descriptor of a file drops every POSIX lock this process holds on
    # it, SQLite's included, and another connection in the process then fails ("disk I/O error").
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    private_file(path)


def open_private(path: Path, flags: int) -> int:
    """os.open of a file created 0600; an existing looser one is tightened through its descriptor. A symbolic link
    in its place is refused (ELOOP), never followed: the words in clear are written to no file elsewhere."""
    fd = os.open(path, flags | os.O_CREAT | os.O_NOFOLLOW, 0o600)
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


class StateWriteError(HearthdError):
    """State that cannot be written: the disk is full (`state-disk-full`), read-only (`state-read-only`) or refuses
    otherwise (`state-unwritable`). What needed the write fails with it; reads go on."""

    code = "state-unwritable"
    phrase_key = "error.cannot_save"

    def __init__(self, code: str, message: str) -> None:
        # What the user hears: the disk is full, read-only, or the change cannot be saved.
        super().__init__(message, code, {"state-disk-full": "error.disk_full",
                                         "state-read-only": "error.read_only"}.get(code, "error.cannot_save"))


def disk_state(path: Path) -> str:
    """What the file system under `path` says about writing: "full", "read-only" or "" (it looks writable)."""
    for where in (path, *path.parents):
        try:
            st = os.statvfs(where)
        except OSError:
            continue
        if st.f_flag & os.ST_RDONLY:
            return "read-only"
        if st.f_bavail * st.f_frsize < 65536 or (st.f_files and st.f_favail == 0):  # not even a WAL index left
            return "full"
        return ""
    return ""


_SQLITE_FULL, _SQLITE_READONLY, _SQLITE_IOERR, _SQLITE_CANTOPEN = 13, 8, 10, 14


def write_problem(e: BaseException, path: Path) -> StateWriteError | None:
    """`e` as a StateWriteError when it says the disk under `path` cannot be written; None for anything else."""
    kind = ""
    if isinstance(e, StateWriteError):
        return e
    if isinstance(e, OSError):
        kind = {errno.ENOSPC: "full", errno.EDQUOT: "full", errno.EROFS: "read-only", errno.EACCES: "unwritable",
                errno.EPERM: "unwritable", errno.ELOOP: "unwritable", errno.ENOTDIR: "unwritable",
                errno.EEXIST: "unwritable", errno.EISDIR: "unwritable"}.get(e.errno or 0, "")
        if e.errno == errno.ELOOP:
            return StateWriteError("state-unwritable", f"cannot save to {path}: it is a symbolic link (or one is "
                                                       "in the way); hearthd writes its state only to its own files")
        if not kind and e.errno == errno.EIO:
            kind = disk_state(path) or "unwritable"
    elif isinstance(e, sqlite3.OperationalError):
        code = (getattr(e, "sqlite_errorcode", 0) or 0) & 0xFF
        if code == _SQLITE_FULL or "database or disk is full" in str(e):
            kind = "full"
        elif code == _SQLITE_READONLY or "readonly database" in str(e):
            kind = disk_state(path) or "unwritable"
        elif code in (_SQLITE_IOERR, _SQLITE_CANTOPEN) or "disk I/O error" in str(e):
            kind = disk_state(path) or ("unwritable" if code == _SQLITE_CANTOPEN else "")
    if not kind:
        return None
    why = {"full": "the disk is full", "read-only": "the disk is read-only",
           "unwritable": f"it cannot be written ({e})"}[kind]
    return StateWriteError("state-disk-full" if kind == "full" else f"state-{kind}",
                           f"cannot save to {path}: {why}")


class PrivateStore:
    """What `open_sqlite` found: `moved_aside` is the kept copy of a corrupt store (None when it was sound),
    `was_empty` says a 0-byte file stood where a database was expected (treated as new, reported), `read_only` is
    why the store could only be opened for reading (a full or read-only disk), None when it is writable."""

    def __init__(self) -> None:
        self.moved_aside: Path | None = None
        self.was_empty = False
        self.read_only: StateWriteError | None = None
        self.retired: list[sqlite3.Connection] = []  # read-only connections replaced once writable: never closed,
        # as closing a descriptor of the file would drop this process's SQLite locks on it


def _open_read_only(path: Path, setup: Callable[[sqlite3.Connection], None]) -> sqlite3.Connection:
    """The store at `path` for reading only, where the disk takes no writes (no -shm can be made or grown): as it
    is (`mode=ro`), else as an unchanging file (`immutable=1`: what a -wal holds is not seen), else, when there is no
    store yet, an empty one in memory. Writes to it fail (`PRAGMA query_only`)."""
    if path.is_file() and path.stat().st_size > 0:
        quoted = urllib.parse.quote(str(path))
        last: sqlite3.DatabaseError | None = None
        for mode in ("mode=ro", "immutable=1"):
            db = sqlite3.connect(f"file:{quoted}?{mode}", uri=True, check_same_thread=False, isolation_level=None)
            try:
                db.execute("SELECT count(*) FROM sqlite_master").fetchall()
            except sqlite3.DatabaseError as e:
                db.close()
                last = e
                continue
            wal = path.with_name(path.name + "-wal")
            if mode == "immutable=1" and wal.is_file() and wal.stat().st_size > 0:
                log.warning("%s: read as it was last checkpointed; the newest changes (in %s) cannot be read until "
                            "the disk can be written", path, wal.name)
            db.execute("PRAGMA query_only=1")
            return db
        assert last is not None
        if not _is_corrupt(last):
            raise last
        log.warning("%s is corrupt (%s) and cannot be moved aside on this disk: reading an empty store", path, last)
    db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    setup(db)
    db.execute("PRAGMA query_only=1")
    return db


@contextlib.contextmanager
def writing(path: Path | None, found: PrivateStore) -> Iterator[None]:
    """Around a write to a store: a full/read-only disk (or a store opened read-only because of one) raises
    StateWriteError, which says so; anything else raises as it was."""
    try:
        yield
    except (OSError, sqlite3.OperationalError) as e:
        problem = write_problem(e, path) if path is not None else None
        if problem is None and found.read_only is not None and isinstance(e, sqlite3.OperationalError):
            problem = found.read_only
        if problem is None:
            raise
        raise problem from e


def reopen_writable(path: Path | None, setup: Callable[[sqlite3.Connection], None],
                    found: PrivateStore) -> sqlite3.Connection | None:
    """A store that was opened read-only, opened for writing again if its disk takes writes now (space freed,
    remounted): the new connection (the caller keeps the old one in `found.retired`), or None while it still cannot."""
    if found.read_only is None or path is None:
        return None
    again = PrivateStore()
    try:
        db = open_sqlite(path, setup, again, read_only_fallback=False)
    except (OSError, sqlite3.OperationalError) as e:
        if write_problem(e, path) is None:
            raise
        return None
    log.warning("%s can be written again", path)
    found.read_only = None
    found.moved_aside = found.moved_aside or again.moved_aside
    return db


def open_sqlite(path: Path | None, setup: Callable[[sqlite3.Connection], None],
                found: PrivateStore | None = None, read_only_fallback: bool = True) -> sqlite3.Connection:
    """An SQLite store at `path` (None: in memory), private (0700 directory, 0600 files), `setup` run on it.
    A store SQLite calls corrupt (on open, in `setup`, or by `PRAGMA quick_check`) is moved aside and a fresh one
    made; a locked/busy one raises as before and is left alone. A 0-byte file is used as a new store, with a
    warning. On a full or read-only disk the store is opened for reading only (`found.read_only` says why, a warning
    is logged): what is stored can still be read, and a write raises StateWriteError. `found`, when given, records
    which of these happened."""
    found = found or PrivateStore()
    if path is None:
        return _open_writable(path, setup, found)
    try:
        return _open_writable(path, setup, found)
    except (OSError, sqlite3.OperationalError) as e:
        problem = write_problem(e, path)
        if problem is None or not read_only_fallback:
            raise
    db = _open_read_only(path, setup)
    found.read_only = problem
    log.warning("%s; it is read-only until it can be written (reads work, changes fail)", problem.message)
    return db


def _open_writable(path: Path | None, setup: Callable[[sqlite3.Connection], None],
                   found: PrivateStore) -> sqlite3.Connection:

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


def _tighten(path: Path, follow: bool = True) -> None:
    mode = os.stat(path, follow_symlinks=follow).st_mode
    if stat.S_ISLNK(mode):
        return
    if mode & _OTHERS:
        os.chmod(path, stat.S_IMODE(mode) & ~_OTHERS)


def no_telemetry() -> None:
    """onnxruntime's telemetry off, before an InferenceSession is made (hearthd/__init__ has already set
    ORT_DISABLE_TELEMETRY, which keeps the device id and event queue from being created at all)."""
    os.environ["ORT_DISABLE_TELEMETRY"] = "1"
    import onnxruntime

    onnxruntime.disable_telemetry_events()
