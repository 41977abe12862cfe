"""Model resolution: an explicit path, the local cache, PyPI model packs, or an opt-in pinned hub download.

Nothing is ever loaded unverified: packs and downloads are hashed while they are written, land in the
cache by an atomic rename, and a sidecar records what was verified so later loads need not re-hash.

Hub files whose sha256 the catalogue cannot pin in advance (BotPsy's GGUFs, the Piper ru/hi voices) take it
from the hub's own file listing, read over the same certificate-verified connection: the Git LFS sha256 for
LFS files, and for small plain-git files the git blob sha1 of the downloaded bytes. What was learned is
recorded in `<asset dir>/pins.json`; later loads verify against that record, and a listing that disagrees
with it later is refused, not followed (`fetch(..., refresh=True)` is the explicit way to take a new version).

The package, one module per reason to change:

    catalogue   the types that describe a model, and CATALOGUE / ALIASES / GROUPS
    errors      AssetError and its two cases, AssetMissing and AssetCorrupt
    store       AssetStore: which source serves a file, and what to say when none can
    cache       the cache on disk: locks, verified writes, sidecars, partial files
    packs       finding and assembling PyPI model packs
    hub         the hub over the wire: listings, downloads, redirect and transport rules
    listing     reading a listing: digests, the file of a quantisation
    pins        pins.json: recording pins from a listing and checking later listings against them
    progress    the progress callback and the CLI's display
"""

from __future__ import annotations

# `hearthd.assets.os` and `hearthd.assets.shutil` stay reachable as they were when this was one module (the
# tests patch `os.fsync` and `shutil.disk_usage` through them).
import os as os
import shutil as shutil

from .cache import PINS_FILE, default_cache_dir
from .catalogue import ALIASES, CATALOGUE, GROUPS, AssetFile, AssetSpec, AssetStatus, PackPart
from .errors import AssetCorrupt, AssetError, AssetMissing
from .hub import _RedirectPolicy as _RedirectPolicy
from .packs import locate_part
from .progress import ProgressCallback, make_progress_printer
from .store import DOWNLOAD_CONFIG_KEY, AssetStore

__all__ = [
    "ALIASES",
    "CATALOGUE",
    "GROUPS",
    "PINS_FILE",
    "AssetCorrupt",
    "AssetError",
    "AssetFile",
    "AssetMissing",
    "AssetSpec",
    "AssetStatus",
    "AssetStore",
    "PackPart",
    "ProgressCallback",
    "DOWNLOAD_CONFIG_KEY",
    "default_cache_dir",
    "locate_part",
    "make_progress_printer",
]
