"""Model packs: pip packages that carry a model in parts, found without importing them and assembled verified."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

from .cache import CHUNK_SIZE, write_verified
from .catalogue import AssetFile, AssetSpec, PackPart
from .errors import AssetCorrupt, AssetError
from .progress import ProgressCallback


def locate_part(part: PackPart) -> Path | None:
    """The installed file of a pack part, found without importing the pack; None when absent."""
    try:
        spec = importlib.util.find_spec(part.module)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    bases: list[Path] = []
    if spec.submodule_search_locations:
        bases.extend(Path(p) for p in spec.submodule_search_locations)
    elif spec.origin and spec.has_location:
        bases.append(Path(spec.origin).parent)
    for base in bases:
        candidate = base / part.path
        if candidate.is_file():
            return candidate
    return None


def assemble(
    final: Path, spec: AssetSpec, f: AssetFile, sources: list[Path], progress: ProgressCallback | None
) -> None:
    """Concatenate the located pack parts of `f` into `final`, installed only if size and sha256 fit."""
    dists = ", ".join(dict.fromkeys(p.dist for p in f.parts))
    reinstall = f"pip install --force-reinstall {' '.join(dict.fromkeys(p.dist for p in f.parts))}"
    parts_size = sum(p.stat().st_size for p in sources)
    if parts_size != f.size:
        # Cheap early check: a wrong pack version shows up here before 500 MB are copied.
        raise AssetCorrupt(
            f"The pack files of '{spec.name}' ({dists}) add up to {parts_size} bytes, expected {f.size}: "
            f"a wrong or damaged pack is installed. Reinstall it: {reinstall}"
        )

    def chunks() -> Iterator[bytes]:
        for src in sources:
            try:
                with src.open("rb") as fh:
                    while chunk := fh.read(CHUNK_SIZE):
                        yield chunk
            except OSError as err:
                raise AssetError(
                    f"Could not read {src} of pack {dists}: {err.strerror or err}. "
                    f"Reinstall it: {reinstall}",
                    "asset-pack-unreadable",
                ) from err

    digest, _, installed = write_verified(final, chunks(), f, f"{spec.name}: assembling {f.name}", progress)
    if not installed:
        raise AssetCorrupt(
            f"'{spec.name}' assembled from {dists} has sha256 {digest}, expected {f.sha256}: the pack is "
            f"damaged or the wrong version. Nothing was installed. Reinstall it: {reinstall}"
        )
