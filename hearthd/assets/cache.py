"""The cache on disk: a directory per asset, files that land in it only verified, and what records that.

A file is streamed into a same-directory temp file while it is hashed, and renamed into place only when its
size and hash fit; a sidecar (`<file>.verified`) records what was verified, so later loads need not re-hash
a file whose size and mtime have not changed since.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import hashlib
import json
import os
import re
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from .catalogue import AssetFile
from .errors import AssetCorrupt, AssetError
from .progress import ProgressCallback, human

CHUNK_SIZE = 1 << 20
SIDECAR_SUFFIX = ".verified"
PARTIAL_MARKER = ".partial-"
# A partial file this old belongs to no live assembly whatever its pid says (pids get reused).
STALE_PARTIAL_S = 24 * 3600.0
PINS_FILE = "pins.json"  # in an asset's directory: the sha256 pins learned from the hub's listing
# A cache file name taken from a listing: no directories, no dot files (temp files and sidecars), no oddities.
SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,200}$")

# One build per asset directory at a time in this process: two threads would share a temp file name.
_DIR_LOCKS: dict[Path, threading.Lock] = {}
_DIR_LOCKS_GUARD = threading.Lock()


def dir_lock(directory: Path) -> threading.Lock:
    with _DIR_LOCKS_GUARD:
        return _DIR_LOCKS.setdefault(directory.absolute(), threading.Lock())


def default_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/hearthd/models`, or `~/.cache/hearthd/models` when that is unset or relative."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    # The XDG spec says relative values are invalid and must be ignored.
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "hearthd" / "models"


# --- file helpers -----------------------------------------------------------------------------------


def hash_file(path: Path, label: str, progress: ProgressCallback | None) -> str:
    digest = hashlib.sha256()
    total = path.stat().st_size
    done = 0
    with path.open("rb") as f:
        while chunk := f.read(CHUNK_SIZE):
            digest.update(chunk)
            done += len(chunk)
            if progress:
                progress(label, done, total)
    return digest.hexdigest()


def fsync_dir(directory: Path) -> None:
    # Makes the rename itself durable; some filesystems refuse to open or sync directories, which is fine.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    with contextlib.suppress(OSError):
        os.fsync(fd)
    os.close(fd)


def unlink(path: Path) -> None:
    path.unlink(missing_ok=True)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# --- state of a cached file -------------------------------------------------------------------------


def cache_state(path: Path, f: AssetFile) -> str:
    """ok (sidecar matches), unverified (size fits, hash it), bad (wrong size), unpinned or absent."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return "absent"
    if not f.pinned:
        # hearthd never installs an unpinned file, so whatever is here was put by hand: leave it alone.
        return "unpinned"
    if not path.is_file() or st.st_size != f.size:
        return "bad"
    record = read_sidecar(path)
    if (
        record is not None
        and record.get("sha256") == f.sha256
        and record.get("size") == st.st_size
        and record.get("mtime_ns") == st.st_mtime_ns
    ):
        return "ok"
    return "unverified"


def usable_cached(path: Path, f: AssetFile, full_check: bool, label: str, progress: ProgressCallback | None) -> bool:
    """Whether the cached `path` is `f`, verified (hashed when it changed or `full_check`); a bad copy is removed."""
    state = cache_state(path, f)
    if state in ("absent", "unpinned"):
        return False
    if state == "bad":
        discard(path)
        return False
    if state == "ok" and not full_check:
        return True
    # Size fits but the file changed since it was verified (or we were asked to check): hash it.
    if hash_file(path, label, progress) == f.sha256:
        write_sidecar(path, f)
        return True
    discard(path)
    return False


# --- building ---------------------------------------------------------------------------------------


def partial_path(final: Path) -> Path:
    return final.with_name(f".{final.name}{PARTIAL_MARKER}{os.getpid()}")


def clean_partials(directory: Path) -> None:
    """Delete temp files of interrupted builds (dead pid, our own pid, or very old)."""
    now = time.time()
    for tmp in directory.glob(f".*{PARTIAL_MARKER}*"):
        try:
            pid = int(tmp.name.rsplit(PARTIAL_MARKER, 1)[1])
        except ValueError:
            pid = -1
        try:
            old = now - tmp.stat().st_mtime > STALE_PARTIAL_S
        except FileNotFoundError:
            continue
        # Our own pid cannot be mid-build here: builds of this directory hold its lock.
        if pid <= 0 or pid == os.getpid() or not _pid_alive(pid) or old:
            unlink(tmp)


def check_space(directory: Path, needed: list[AssetFile]) -> None:
    want = sum(f.size for f in needed)
    free = shutil.disk_usage(directory).free
    if want > free:
        raise AssetError(
            f"Not enough disk space in {directory}: the model needs {human(want)}, "
            f"{human(free)} is free.",
            "asset-no-space",
        )


def write_verified(
    final: Path,
    chunks: Iterator[bytes],
    f: AssetFile,
    label: str,
    progress: ProgressCallback | None,
    git_oid: str = "",
) -> tuple[str, str, bool]:
    """Stream into a same-directory temp file, hashing; rename into place only if size and hash fit.

    The hash that must fit is the pinned sha256, and with `git_oid` also the git blob sha1 (what the hub
    lists for a plain git file, whose sha256 is then learned from the bytes). Returns the sha256 and git
    blob sha1 of what was received and whether it was installed; the caller raises when it was not, by
    which time the temp file is already gone.
    """
    tmp = partial_path(final)
    digest = hashlib.sha256()
    blob = hashlib.sha1(b"blob %d\0" % f.size, usedforsecurity=False) if git_oid else None
    done = 0
    installed = False
    try:
        with tmp.open("wb") as out:
            for chunk in chunks:
                out.write(chunk)
                digest.update(chunk)
                if blob is not None:
                    blob.update(chunk)
                done += len(chunk)
                if progress:
                    progress(label, done, f.size)
            out.flush()
            os.fsync(out.fileno())
        if done != f.size:
            raise AssetCorrupt(f"{final.name}: received {done} bytes, expected {f.size}; discarded.")
        sha256 = digest.hexdigest()
        sha1 = blob.hexdigest() if blob is not None else ""
        if (
            (f.sha256 or git_oid)
            and (not f.sha256 or sha256 == f.sha256)
            and (not git_oid or sha1 == git_oid)
        ):
            unlink(sidecar(final))
            os.replace(tmp, final)
            fsync_dir(final.parent)
            installed = True
    except OSError as err:
        if err.errno == errno.ENOSPC:
            raise AssetError(
                f"Not enough disk space to write {final}: {err.strerror or err}. Nothing was installed; free "
                f"some space and try again.",
                "asset-no-space",
            ) from err
        raise AssetError(f"Could not write {final}: {err.strerror or err}", "asset-write-failed") from err
    finally:
        if not installed:
            unlink(tmp)
    if installed:
        write_sidecar(final, dataclasses.replace(f, sha256=sha256))
    return sha256, sha1, installed


def discard(path: Path) -> None:
    unlink(sidecar(path))
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        unlink(path)


@contextlib.contextmanager
def all_or_nothing() -> Iterator[list[Path]]:
    """Files installed in the block are removed again if it fails: an asset is in the cache whole or not at all."""
    installed: list[Path] = []
    try:
        yield installed
    except BaseException:
        for path in installed:
            discard(path)
        raise


# --- sidecars ---------------------------------------------------------------------------------------


def sidecar(path: Path) -> Path:
    return path.with_name(path.name + SIDECAR_SUFFIX)


def read_sidecar(path: Path) -> dict[str, object] | None:
    try:
        record = json.loads(sidecar(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def write_sidecar(path: Path, f: AssetFile) -> None:
    st = path.stat()
    record = {
        "sha256": f.sha256,
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "verified_at": time.time(),
    }
    car = sidecar(path)
    tmp = car.with_name(f".{car.name}{PARTIAL_MARKER}{os.getpid()}")
    try:
        tmp.write_text(json.dumps(record), encoding="utf-8")
        os.replace(tmp, car)
    except OSError:
        # Only the fast path is lost: the next load re-hashes.
        unlink(tmp)
