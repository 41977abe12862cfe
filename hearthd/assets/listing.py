"""What the hub's file listing says: the digest it gives each file, and which listed file a catalogue file is.

A listing entry gives the Git LFS sha256 of an LFS file, or the git blob sha1 of a small plain-git file. A
catalogue file with a quantisation tag (`hub_quant`) is the one GGUF of the repo whose name carries that tag.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from .cache import PINS_FILE, SAFE_NAME, SIDECAR_SUFFIX
from .catalogue import AssetFile, AssetSpec
from .errors import AssetCorrupt, AssetError

Listing = dict[str, tuple[dict[str, object], str]]
"""The hub's file entries by path, each with the URL of the listing it came from."""

HEX64 = re.compile(r"^[0-9a-f]{64}$")
HEX40 = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class Listed:
    """What the hub's listing says about one file: an LFS sha256, or (plain git files) the git blob sha1."""

    path: str
    size: int
    sha256: str = ""
    git_oid: str = ""


def listed_file(spec: AssetSpec, raw: dict[str, object], url: str) -> Listed:
    """The digest the listing gives for one file: the LFS sha256, or the git blob sha1 of a plain file."""
    path = str(raw["path"])
    size = raw.get("size")
    lfs = raw.get("lfs")
    sha256 = git_oid = ""
    if isinstance(lfs, dict):
        oid = lfs.get("oid", lfs.get("sha256"))
        size = lfs.get("size", size)
        if isinstance(oid, str) and HEX64.match(oid.lower().removeprefix("sha256:")):
            sha256 = oid.lower().removeprefix("sha256:")
    else:
        oid = raw.get("oid")
        if isinstance(oid, str) and HEX40.match(oid.lower()):
            git_oid = oid.lower()
    if not sha256 and not git_oid:
        raise AssetError(
            f"The hub's listing {url} gives no sha256 (and no git blob sha1) for {path}, so '{spec.name}' "
            f"cannot be verified and is not downloaded. Set {spec.config_key} to a copy you trust.",
            "asset-unpinned",
        )
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise AssetError(
            f"The hub's listing {url} gives no valid size for {path}: {size!r}", "asset-listing-invalid"
        )
    return Listed(path, size, sha256, git_oid)


def pick(spec: AssetSpec, cat: AssetFile, listed: Listing) -> Listed:
    """The listed file for a catalogue file: its hub path, or the one GGUF of its quantisation."""
    if not cat.hub_quant:
        path = cat.hub_file or cat.name
        if path not in listed:
            raise not_listed(spec, path, listed)
        return listed_file(spec, *listed[path])
    # The tag as a word of the name: Q4_K does not match Q4_K_M, f16 does not match bf16.
    tag = re.compile(rf"(?<![a-z0-9]){re.escape(cat.hub_quant.lower())}(?![a-z0-9_])")
    ggufs = sorted(
        p for p in listed
        if p.lower().endswith(".gguf") and not posixpath.basename(p).lower().startswith("mmproj")
    )
    hits = [p for p in ggufs if tag.search(posixpath.basename(p).lower())]
    if len(hits) == 1:
        return listed_file(spec, *listed[hits[0]])
    where = f"{spec.hub_repo}@{spec.hub_revision}"
    if not hits:
        raise AssetError(
            f"{where} has no {cat.hub_quant} GGUF for '{spec.name}'; it has: "
            f"{', '.join(ggufs) or 'no GGUF files'}.",
            "asset-quant-missing",
        )
    raise AssetError(
        f"Several files of {where} match {cat.hub_quant} for '{spec.name}': {', '.join(hits)}; hearthd does "
        f"not guess. Download the one you want and set {spec.config_key} to it.",
        "asset-quant-ambiguous",
    )


def local_name(path: str) -> str:
    """The cache file name for a listed path: its base name, refused when it is not a plain file name."""
    name = posixpath.basename(path)
    if not SAFE_NAME.match(name) or name == PINS_FILE or name.endswith(SIDECAR_SUFFIX):
        raise AssetError(f"The hub lists a file name hearthd will not write: {path!r}", "asset-listing-invalid")
    return name


def check_catalogue_pin(spec: AssetSpec, cat: AssetFile, entry: Listed) -> None:
    """Refuse a listing that disagrees with the size or sha256 the catalogue pins for a file."""
    if entry.size == cat.size and (not entry.sha256 or entry.sha256 == cat.sha256):
        return
    listed = f"sha256 {entry.sha256}" if entry.sha256 else f"git blob {entry.git_oid}"
    raise AssetCorrupt(
        f"The hub lists {entry.path} of {spec.hub_repo} with {listed} ({entry.size} bytes), but hearthd pins "
        f"sha256 {cat.sha256} ({cat.size} bytes) for it: the hub's file is not the one hearthd knows. Nothing "
        f"was downloaded. Set {spec.config_key} to a copy you trust.",
        "asset-pin-mismatch",
    )


def not_listed(spec: AssetSpec, path: str, listed: Listing) -> AssetError:
    return AssetError(
        f"{path} is not in the hub's listing of {spec.hub_repo}@{spec.hub_revision} ({len(listed)} files listed "
        f"there), so '{spec.name}' cannot be downloaded. Set {spec.config_key} to a copy you have.",
        "asset-not-listed",
    )
