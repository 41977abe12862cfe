"""pins.json: the sha256 pins learned from the hub's listing for a download-only asset.

A file the catalogue cannot pin takes its sha256 from the listing; what was learned is recorded in
`<asset dir>/pins.json`, later loads verify against that record, and a listing that later disagrees with it
is refused, not followed.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import time
from pathlib import Path

from .cache import PARTIAL_MARKER, SAFE_NAME, fsync_dir, unlink
from .catalogue import AssetFile, AssetSpec
from .errors import AssetError
from .listing import HEX64, Listed


def by_listing(spec: AssetSpec) -> bool:
    """Whether unpinned files of the asset take their sha256 from the hub's listing (download-only assets)."""
    return spec.pin_from_listing and bool(spec.hub_repo) and not spec.dists


def read_pins(spec: AssetSpec, path: Path, tolerate: bool = False) -> dict[str, dict[str, object]]:
    """The valid pins recorded (at `path`) for the asset's catalogue files; a damaged record is an error (or,
    with `tolerate`, ignored)."""
    if not by_listing(spec):
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as err:
        if tolerate:
            return {}
        raise _pins_corrupt(spec, path, str(err)) from err
    problem = ""
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
        problem = "no files table"
    elif data.get("repo") != spec.hub_repo or data.get("revision") != spec.hub_revision:
        return {}  # pins of another source (the catalogue moved on): learn afresh
    pins: dict[str, dict[str, object]] = {}
    known = {f.name for f in spec.files if not f.pinned}
    for key, record in (data.get("files") or {}).items() if not problem else ():
        ok = (
            isinstance(record, dict)
            and isinstance(record.get("file"), str)
            and SAFE_NAME.match(record["file"]) is not None
            and isinstance(record.get("path"), str)
            and isinstance(record.get("sha256"), str)
            and HEX64.match(record["sha256"]) is not None
            and isinstance(record.get("size"), int)
            and not isinstance(record.get("size"), bool)
        )
        if not ok:
            problem = f"a bad record for {key}"
            break
        if key in known:
            pins[key] = record
    if problem:
        if tolerate:
            return {}
        raise _pins_corrupt(spec, path, problem)
    return pins


def _pins_corrupt(spec: AssetSpec, path: Path, why: str) -> AssetError:
    return AssetError(
        f"{path} is damaged ({why}), so the cached '{spec.name}' cannot be verified. Run "
        f"`hearthd models fetch {spec.name} --refresh` to read the hub's listing again.",
        "asset-pins-corrupt",
    )


def apply_pins(spec: AssetSpec, pins: dict[str, dict[str, object]]) -> AssetSpec:
    """The spec with its unpinned files replaced by what was recorded for them."""
    if not pins:
        return spec
    files: list[AssetFile] = []
    entry = spec.entry
    for f in spec.files:
        record = pins.get(f.name)
        if record is None or f.pinned:
            files.append(f)
            continue
        size = record["size"]
        pinned = AssetFile(
            str(record["file"]), str(record["sha256"]), size if isinstance(size, int) else 0, (),
            str(record["path"]),
        )
        if spec.entry == f.name:
            entry = pinned.name
        files.append(pinned)
    return dataclasses.replace(spec, files=tuple(files), entry=entry)


def write_pins(spec: AssetSpec, path: Path, pins: dict[str, dict[str, object]]) -> None:
    """Record `pins` for the asset at `path`, atomically (temp file, fsync, rename)."""
    record = {
        "about": "sha256 pins hearthd took from the hub's file listing; the cached files are verified "
        "against them, and a listing that later disagrees is refused",
        "asset": spec.name,
        "repo": spec.hub_repo,
        "revision": spec.hub_revision,
        "files": pins,
    }
    tmp = path.with_name(f".{path.name}{PARTIAL_MARKER}{os.getpid()}")
    try:
        with tmp.open("w", encoding="utf-8") as out:
            out.write(json.dumps(record, indent=2, sort_keys=True) + "\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
        fsync_dir(path.parent)
    except OSError as err:
        unlink(tmp)
        code = "asset-no-space" if err.errno == errno.ENOSPC else "asset-write-failed"
        raise AssetError(f"Could not record the pins in {path}: {err.strerror or err}", code) from err


def new_pin(spec: AssetSpec, local: str, entry: Listed, source: str, listing_url: str) -> dict[str, object]:
    """The record of a pin taken now from the listing: cached as `local`, downloaded from `source`."""
    record: dict[str, object] = {
        "file": local,
        "path": entry.path,
        "sha256": entry.sha256,
        "size": entry.size,
        "digest_from": "lfs-sha256" if entry.sha256 else "git-blob-sha1",
        "source": source,
        "listing": listing_url,
        "revision": spec.hub_revision,
        "listed_at": _utc_now(),
    }
    if entry.git_oid:
        record["git_oid"] = entry.git_oid
    return record


def agrees(record: dict[str, object], entry: Listed) -> bool:
    """Whether a recorded pin still describes what the listing now says about the file."""
    if record.get("size") != entry.size or record.get("path") != entry.path:
        return False
    if entry.sha256:
        return record.get("sha256") == entry.sha256
    return record.get("git_oid") == entry.git_oid


def pin_changed(spec: AssetSpec, record: dict[str, object], entry: Listed | None) -> AssetError:
    if entry is None:
        now = "it is no longer listed"
    elif entry.sha256:
        now = f"it now lists sha256 {entry.sha256}, {entry.size} bytes"
    else:
        now = f"it now lists git blob {entry.git_oid}, {entry.size} bytes"
    return AssetError(
        f"The hub's listing of {spec.hub_repo}@{spec.hub_revision} no longer matches the pin recorded for "
        f"{record.get('path')} on {record.get('listed_at')} (sha256 {record.get('sha256')}, {record.get('size')} "
        f"bytes): {now}. hearthd does not follow a changed listing silently, so nothing was downloaded. To take "
        f"the hub's current version, run `hearthd models fetch {spec.name} --refresh`.",
        "asset-pin-changed",
    )


def _utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
