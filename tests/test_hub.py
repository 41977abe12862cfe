"""Downloads pinned by the hub's own listing: BotPsy's GGUFs and the Piper ru/hi voices, against a local server
that mimics the hub (tree listing with LFS sha256 and git oids, resolve with a CDN redirect, and its faults)."""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import http.server
import json
import os
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from hearthd.assets import (
    ALIASES,
    CATALOGUE,
    GROUPS,
    AssetCorrupt,
    AssetError,
    AssetMissing,
    AssetSpec,
    AssetStore,
    _RedirectPolicy,
)

BOTPSY = "qvac/BotPsy-0.8B"
VOICES = "rhasspy/piper-voices"
IRINA = "ru/ru_RU/irina/medium/ru_RU-irina-medium"
PRATHAM = "hi/hi_IN/pratham/medium/hi_IN-pratham-medium"
JOE = "en/en_US/joe/medium/en_US-joe-medium"


def fake(tag: str, size: int = 3000) -> bytes:
    """A few kB that stand for a model: distinct per tag, never a real model."""
    seed = hashlib.sha256(tag.encode()).digest()
    return (seed * (size // len(seed) + 1))[:size]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def git_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def voice_json(name: str) -> bytes:
    return json.dumps({"audio": {"sample_rate": 22050}, "espeak": {"voice": name}}).encode()


def botpsy_files() -> dict[str, bytes]:
    return {
        ".gitattributes": b"*.gguf filter=lfs diff=lfs merge=lfs -text\n",
        "README.md": b"# BotPsy-0.8B\n",
        "BotPsy-0.8B-Q4_K_M.gguf": b"GGUF" + fake("q4"),
        "BotPsy-0.8B-Q8_0.gguf": b"GGUF" + fake("q8", 5000),
        "BotPsy-0.8B-BF16.gguf": b"GGUF" + fake("bf16", 7000),
        "mmproj-BotPsy-0.8B-bf16.gguf": b"GGUF" + fake("mmproj"),
    }


def voice_files() -> dict[str, bytes]:
    files = {}
    denis = "ru/ru_RU/denis/medium/ru_RU-denis-medium"
    for stem, lang in ((IRINA, "ru"), (PRATHAM, "hi"), (JOE, "en-us"), (denis, "ru")):
        files[f"{stem}.onnx"] = fake(stem, 4000)
        files[f"{stem}.onnx.json"] = voice_json(lang)
        files[stem.rsplit("/", 1)[0] + "/MODEL_CARD"] = b"# Model card\n"
    return files


class Hub:
    """What the fake hub holds and how it misbehaves."""

    def __init__(self) -> None:
        self.repos: dict[str, dict[str, bytes]] = {BOTPSY: botpsy_files(), VOICES: voice_files()}
        self.served: dict[tuple[str, str], bytes] = {}  # bytes served instead of the listed ones (a lying digest)
        self.entry: dict[tuple[str, str], dict[str, object]] = {}  # listing entry fields replaced
        self.truncate: set[tuple[str, str]] = set()
        self.gone: set[tuple[str, str]] = set()  # listed, but the download 404s
        self.listing_body: dict[str, bytes] = {}  # a raw listing instead of the real one
        self.redirect = True  # LFS files 302 to a "CDN" on another host name, like the real hub
        self.page_size = 0
        self.next_origin = ""  # where next-page links point ("" = this server); a mirror may name the main hub
        self.slow_s = 0.0
        self.requests: list[str] = []

    @staticmethod
    def is_lfs(path: str) -> bool:
        return path.endswith((".gguf", ".onnx"))

    def listing(self, repo: str, folder: str) -> list[dict[str, object]]:
        entries: list[dict[str, object]] = []
        dirs: set[str] = set()
        for path, data in sorted(self.repos[repo].items()):
            if folder and not path.startswith(folder + "/"):
                continue
            parent = path.rsplit("/", 1)[0] if "/" in path else ""
            while parent and parent != folder and parent not in dirs:
                dirs.add(parent)
                entries.append({"type": "directory", "oid": git_oid(parent.encode()), "size": 0, "path": parent})
                parent = parent.rsplit("/", 1)[0] if "/" in parent else ""
            entry: dict[str, object] = {"type": "file", "oid": git_oid(data), "size": len(data), "path": path}
            if self.is_lfs(path):
                entry["oid"] = git_oid(b"pointer " + sha(data).encode())  # the git blob is the LFS pointer
                entry["lfs"] = {"oid": sha(data), "size": len(data), "pointerSize": 134}
            entry.update(self.entry.get((repo, path), {}))
            entries.append(entry)
        return entries


class Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that gave up (the timeout test) is not a test failure


class HubHandler(http.server.BaseHTTPRequestHandler):
    hub: Hub

    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        hub = self.hub
        hub.requests.append(self.path)
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        path = urllib.parse.unquote(url.path)
        if path.startswith("/api/models/"):
            self.tree(path.removeprefix("/api/models/"), query)
        elif path.startswith("/cdn/"):
            repo, _, file = path.removeprefix("/cdn/").partition("/-/")
            self.file(repo, file)
        elif "/resolve/" in path:
            repo, _, rest = path.lstrip("/").partition("/resolve/")
            revision, _, file = rest.partition("/")
            if revision != "main" or file not in hub.repos.get(repo, {}) or (repo, file) in hub.gone:
                self.send_error(404, "Entry not found")
            elif hub.redirect and hub.is_lfs(file):
                self.send_response(302)
                port = self.server.server_address[1]
                self.send_header("Location", f"http://localhost:{port}/cdn/{repo}/-/{file}")
                self.end_headers()
            else:
                self.file(repo, file)
        else:
            self.send_error(404)

    def tree(self, rest: str, query: dict[str, list[str]]) -> None:
        hub = self.hub
        owner, name, tree, revision, *folder = rest.split("/")
        repo = f"{owner}/{name}"
        if tree != "tree" or repo not in hub.repos or revision != "main" or query.get("recursive") != ["true"]:
            self.send_error(404, "Revision not found")
            return
        if hub.slow_s:
            time.sleep(hub.slow_s)
        if repo in hub.listing_body:
            body = hub.listing_body[repo]
            link = ""
        else:
            entries = hub.listing(repo, "/".join(folder))
            start = int(query.get("cursor", ["0"])[0])
            link = ""
            if hub.page_size:
                end = start + hub.page_size
                if end < len(entries):
                    origin = hub.next_origin or f"http://127.0.0.1:{self.server.server_address[1]}"
                    here = urllib.parse.urlsplit(self.path).path
                    link = f'<{origin}{here}?recursive=true&cursor={end}>; rel="next"'
                entries = entries[start:end]
            body = json.dumps(entries).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if link:
            self.send_header("Link", link)
        self.end_headers()
        self.wfile.write(body)

    def file(self, repo: str, file: str) -> None:
        hub = self.hub
        data = hub.served.get((repo, file), hub.repos[repo][file])
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data[: len(data) // 2] if (repo, file) in hub.truncate else data)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def hub() -> Iterator[tuple[Hub, str]]:
    state = Hub()
    handler = type("Handler", (HubHandler,), {"hub": state})
    server = Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_catalogue() -> dict[str, AssetSpec]:
    """The real catalogue, with the two pins that name real bytes (irina's .onnx, joe) pointed at fake ones."""
    cat = dict(CATALOGUE)
    files = voice_files()
    irina = cat["piper-ru-irina"]
    onnx, onnx_json = irina.files
    onnx = dataclasses.replace(onnx, sha256=sha(files[f"{IRINA}.onnx"]), size=len(files[f"{IRINA}.onnx"]))
    cat["piper-ru-irina"] = dataclasses.replace(irina, files=(onnx, onnx_json))
    joe = cat["piper-en-joe"]
    cat["piper-en-joe"] = dataclasses.replace(joe, pip_extra="", files=tuple(
        dataclasses.replace(f, parts=(), sha256=sha(files[str(f.hub_file)]), size=len(files[str(f.hub_file)]))
        for f in joe.files
    ))
    return cat


test_catalogue.__test__ = False  # type: ignore[attr-defined]  # a helper, not a test


def make_store(cache: Path, hub_url: str, **kwargs: object) -> AssetStore:
    kwargs.setdefault("catalogue", test_catalogue())
    return AssetStore(cache_dir=cache, hub_url=hub_url, **kwargs)  # type: ignore[arg-type]


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


def file_requests(hub: Hub) -> list[str]:
    return [r for r in hub.requests if not r.startswith("/api/")]


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


# --- BotPsy -----------------------------------------------------------------------------------------


def test_botpsy_fetch_takes_the_sha256_from_the_listing_and_records_it(hub: tuple[Hub, str], cache: Path) -> None:
    state, url = hub
    s = make_store(cache, url)  # assets.allow_download off: naming the model is the consent
    path = s.fetch("botpsy", consent=True)
    data = state.repos[BOTPSY]["BotPsy-0.8B-Q4_K_M.gguf"]
    assert path == cache / "botpsy-0.8b" / "BotPsy-0.8B-Q4_K_M.gguf"
    assert path.read_bytes() == data
    assert state.requests == [
        "/api/models/qvac/BotPsy-0.8B/tree/main?recursive=true",
        "/qvac/BotPsy-0.8B/resolve/main/BotPsy-0.8B-Q4_K_M.gguf",
        "/cdn/qvac/BotPsy-0.8B/-/BotPsy-0.8B-Q4_K_M.gguf",  # the 302 was followed
    ]
    pins = json.loads((cache / "botpsy-0.8b" / "pins.json").read_text())
    assert pins["repo"] == BOTPSY and pins["revision"] == "main"
    record = pins["files"]["BotPsy-0.8B-Q4_K_M.gguf"]
    assert record["file"] == "BotPsy-0.8B-Q4_K_M.gguf" and record["sha256"] == sha(data)
    assert record["size"] == len(data) and record["digest_from"] == "lfs-sha256"
    assert record["source"] == f"{url}/qvac/BotPsy-0.8B/resolve/main/BotPsy-0.8B-Q4_K_M.gguf"
    assert record["revision"] == "main" and record["listed_at"].endswith("Z")
    assert leftovers(cache / "botpsy-0.8b") == ["BotPsy-0.8B-Q4_K_M.gguf", "BotPsy-0.8B-Q4_K_M.gguf.verified",
                                                "pins.json"]
    assert s.verify("botpsy") == []
    assert s.pinned_spec("botpsy-0.8b").files[0].sha256 == sha(data)


def test_second_fetch_and_daemon_start_use_the_recorded_pin_without_listing(hub: tuple[Hub, str], cache: Path) -> None:
    state, url = hub
    path = make_store(cache, url).fetch("botpsy-0.8b", consent=True)
    state.requests.clear()
    again = make_store(cache, url)
    assert again.fetch("botpsy", consent=True) == path
    assert again.resolve("botpsy-0.8b") == path  # daemon start, assets.allow_download off
    assert again.status("botpsy-0.8b").source == "cache"
    assert state.requests == []


def test_automatic_resolution_obeys_allow_download(hub: tuple[Hub, str], cache: Path) -> None:
    state, url = hub
    with pytest.raises(AssetMissing) as err:
        make_store(cache, url).resolve("botpsy-0.8b")
    assert "hearthd models fetch botpsy-0.8b" in str(err.value) and "agent.model_path" in str(err.value)
    assert state.requests == []
    status = make_store(cache, url).status("botpsy-0.8b")
    assert status.source == "missing" and "agent.model_path" in status.detail
    s = make_store(cache, url, allow_download=True)
    assert s.status("botpsy-0.8b").source == "hub"
    assert s.resolve("botpsy-0.8b").read_bytes() == state.repos[BOTPSY]["BotPsy-0.8B-Q4_K_M.gguf"]


def test_a_tampered_cache_file_is_caught(hub: tuple[Hub, str], cache: Path) -> None:
    state, url = hub
    path = make_store(cache, url).fetch("botpsy", consent=True)
    st = path.stat()
    damaged = bytearray(path.read_bytes())
    damaged[100] ^= 0xFF
    path.write_bytes(bytes(damaged))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size and mtime: only a full hash sees it
    problems = make_store(cache, url).verify("botpsy")
    assert len(problems) == 1 and "does not match the pinned" in problems[0]
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    with pytest.raises(AssetMissing):  # daemon start: re-hashed, discarded, and no download allowed
        make_store(cache, url).resolve("botpsy-0.8b")
    assert not path.exists()
    state.requests.clear()
    assert make_store(cache, url).fetch("botpsy", consent=True).read_bytes() == state.repos[BOTPSY][path.name]
    assert state.requests[0].startswith("/api/models/")  # a download re-reads the listing first


def test_a_changed_listing_is_refused_until_refresh(hub: tuple[Hub, str], cache: Path) -> None:
    state, url = hub
    path = make_store(cache, url).fetch("botpsy", consent=True)
    old = path.read_bytes()
    pins_before = (cache / "botpsy-0.8b" / "pins.json").read_text()
    new = b"GGUF" + fake("q4 v2")
    state.repos[BOTPSY]["BotPsy-0.8B-Q4_K_M.gguf"] = new  # the repo publishes another file under the name
    assert make_store(cache, url).fetch("botpsy", consent=True).read_bytes() == old  # cached: nothing re-read
    path.unlink()
    state.requests.clear()
    with pytest.raises(AssetError) as err:
        make_store(cache, url).fetch("botpsy", consent=True)
    assert err.value.code == "asset-pin-changed" and "--refresh" in str(err.value)
    assert file_requests(state) == []  # refused before any byte
    assert (cache / "botpsy-0.8b" / "pins.json").read_text() == pins_before
    assert not path.exists() and not [n for n in leftovers(cache / "botpsy-0.8b") if "partial" in n]
    refreshed = make_store(cache, url).fetch("botpsy", consent=True, refresh=True)
    assert refreshed.read_bytes() == new
    record = json.loads((cache / "botpsy-0.8b" / "pins.json").read_text())["files"]["BotPsy-0.8B-Q4_K_M.gguf"]
    assert record["sha256"] == sha(new)


def test_refresh_takes_a_renamed_file_and_drops_the_old_one(hub: tuple[Hub, str], cache: Path) -> None:
    state, url = hub
    old = make_store(cache, url).fetch("botpsy", consent=True)
    files = state.repos[BOTPSY]
    files["botpsy-0.8b.Q4_K_M.gguf"] = files.pop("BotPsy-0.8B-Q4_K_M.gguf")
    assert make_store(cache, url).fetch("botpsy", consent=True) == old  # still trusted as recorded
    new = make_store(cache, url).fetch("botpsy", consent=True, refresh=True)
    assert new.name == "botpsy-0.8b.Q4_K_M.gguf" and not old.exists()
    assert make_store(cache, url).resolve("botpsy") == new


def test_a_lying_digest_installs_nothing(hub: tuple[Hub, str], cache: Path) -> None:
    state, url = hub
    state.served[(BOTPSY, "BotPsy-0.8B-Q4_K_M.gguf")] = b"GGUF" + fake("not what was listed")
    with pytest.raises(AssetCorrupt) as err:
        make_store(cache, url).fetch("botpsy", consent=True)
    assert "sha256" in str(err.value) and "the hub lists" in str(err.value)
    assert leftovers(cache / "botpsy-0.8b") == []  # no partial file, no pin


def test_quantisation_is_picked_from_the_listing(hub: tuple[Hub, str], cache: Path) -> None:
    state, url = hub
    s = make_store(cache, url)
    assert s.expand("botpsy") == ["botpsy-0.8b"]
    assert s.expand("botpsy", "q8_0") == ["botpsy-0.8b-q8_0"]
    assert s.expand("botpsy-0.8b", "BF16") == ["botpsy-0.8b-bf16"]
    q8 = s.fetch(s.expand("botpsy", "Q8_0")[0], consent=True)
    assert q8 == cache / "botpsy-0.8b-q8_0" / "BotPsy-0.8B-Q8_0.gguf"
    assert q8.read_bytes() == state.repos[BOTPSY]["BotPsy-0.8B-Q8_0.gguf"]
    bf16 = s.fetch("botpsy-0.8b-bf16", consent=True)  # the mmproj-*-bf16.gguf vision projector is not it
    assert bf16.name == "BotPsy-0.8B-BF16.gguf"
    with pytest.raises(AssetError) as err:
        s.expand("botpsy", "Q5_K_M")
    assert err.value.code == "asset-quant-unknown" and "Q8_0" in str(err.value) and "bf16" in str(err.value)
    with pytest.raises(AssetError) as err:
        s.expand("voices", "Q8_0")
    assert err.value.code == "asset-quant-unknown"


def test_quantisation_missing_or_ambiguous_lists_what_the_repo_has(hub: tuple[Hub, str], cache: Path) -> None:
    state, url = hub
    del state.repos[BOTPSY]["BotPsy-0.8B-Q8_0.gguf"]
    with pytest.raises(AssetError) as err:
        make_store(cache, url).fetch("botpsy-0.8b-q8_0", consent=True)
    assert err.value.code == "asset-quant-missing"
    assert "BotPsy-0.8B-Q4_K_M.gguf" in str(err.value) and "BotPsy-0.8B-BF16.gguf" in str(err.value)
    state.repos[BOTPSY]["old/BotPsy-0.8B-Q4_K_M.gguf"] = b"GGUF" + fake("older q4")
    with pytest.raises(AssetError) as err:
        make_store(cache, url).fetch("botpsy", consent=True)
    assert err.value.code == "asset-quant-ambiguous" and "old/BotPsy-0.8B-Q4_K_M.gguf" in str(err.value)
    assert file_requests(state) == []


# --- Piper voices -----------------------------------------------------------------------------------


def test_voices_fetch_all_three_languages(hub: tuple[Hub, str], cache: Path) -> None:
    state, url = hub
    s = make_store(cache, url)
    assert s.expand("voices") == ["piper-en-joe", "piper-ru-irina", "piper-hi-pratham"]
    paths = {name: s.fetch(name, consent=True) for name in s.expand("voices")}
    files = state.repos[VOICES]
    for name, stem in (("piper-en-joe", JOE), ("piper-ru-irina", IRINA), ("piper-hi-pratham", PRATHAM)):
        assert paths[name] == cache / name / f"{stem.rsplit('/', 1)[1]}.onnx"
        assert paths[name].read_bytes() == files[f"{stem}.onnx"]
        assert (cache / name / f"{stem.rsplit('/', 1)[1]}.onnx.json").read_bytes() == files[f"{stem}.onnx.json"]
    # Only the voice's own folder is listed (the real repo has thousands of files); joe is fully pinned.
    listings = [r for r in state.requests if r.startswith("/api/")]
    assert listings == [
        "/api/models/rhasspy/piper-voices/tree/main/ru/ru_RU/irina/medium?recursive=true",
        "/api/models/rhasspy/piper-voices/tree/main/hi/hi_IN/pratham/medium?recursive=true",
    ]
    pins = json.loads((cache / "piper-ru-irina" / "pins.json").read_text())["files"]
    assert list(pins) == ["ru_RU-irina-medium.onnx.json"]  # the .onnx is pinned by the catalogue
    record = pins["ru_RU-irina-medium.onnx.json"]
    data = files[f"{IRINA}.onnx.json"]
    assert record["digest_from"] == "git-blob-sha1" and record["git_oid"] == git_oid(data)
    assert record["sha256"] == sha(data) and record["size"] == len(data)
    hi = json.loads((cache / "piper-hi-pratham" / "pins.json").read_text())["files"]
    assert sorted(hi) == ["hi_IN-pratham-medium.onnx", "hi_IN-pratham-medium.onnx.json"]
    assert hi["hi_IN-pratham-medium.onnx"]["sha256"] == sha(files[f"{PRATHAM}.onnx"])
    assert all(s.verify(name) == [] for name in paths)
    state.requests.clear()
    assert s.natural_voice("ru") == paths["piper-ru-irina"] and s.natural_voice("hi") == paths["piper-hi-pratham"]
    assert state.requests == []


def test_a_wrong_git_blob_sha1_installs_nothing_of_the_voice(hub: tuple[Hub, str], cache: Path) -> None:
    state, url = hub
    state.served[(VOICES, f"{IRINA}.onnx.json")] = b"x" * len(voice_json("ru"))  # same size, other bytes
    with pytest.raises(AssetCorrupt) as err:
        make_store(cache, url).fetch("piper-ru-irina", consent=True)
    assert "git blob sha1" in str(err.value)
    assert leftovers(cache / "piper-ru-irina") == []  # the verified .onnx went again: whole or nothing
    assert make_store(cache, url).natural_voice("ru") is None


def test_a_listing_that_disagrees_with_the_catalogue_pin_is_refused(hub: tuple[Hub, str], cache: Path) -> None:
    state, url = hub
    state.entry[(VOICES, f"{IRINA}.onnx")] = {"lfs": {"oid": "ab" * 32, "size": 4000}}
    with pytest.raises(AssetCorrupt) as err:
        make_store(cache, url).fetch("piper-ru-irina", consent=True)
    assert err.value.code == "asset-pin-mismatch" and "ab" * 32 in str(err.value)
    assert file_requests(state) == []


@pytest.mark.parametrize("next_origin", ["", "https://main-hub.test"])
def test_a_long_listing_is_read_page_by_page_on_the_same_hub(
    hub: tuple[Hub, str], cache: Path, next_origin: str
) -> None:
    state, url = hub
    state.page_size = 2
    state.next_origin = next_origin  # a mirror's next link naming another host is followed on this hub
    path = make_store(cache, url).fetch("piper-hi-pratham", consent=True)
    assert path.read_bytes() == state.repos[VOICES][f"{PRATHAM}.onnx"]
    first = "/api/models/rhasspy/piper-voices/tree/main/hi/hi_IN/pratham/medium?recursive=true"
    assert [r for r in state.requests if r.startswith("/api/")] == [first, first + "&cursor=2"]


# --- what goes wrong --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "code"),
    [
        ("listing-404", "asset-listing-failed"),
        ("listing-not-json", "asset-listing-invalid"),
        ("listing-not-a-list", "asset-listing-invalid"),
        ("not-listed", "asset-not-listed"),
        ("no-digest", "asset-unpinned"),
        ("bigger-than-listed", "asset-corrupt"),
        ("truncated", "asset-download-failed"),
        ("download-404", "asset-download-failed"),
        ("timeout", "asset-listing-failed"),
    ],
)
def test_each_failure_is_a_clear_error_and_installs_nothing(
    hub: tuple[Hub, str], cache: Path, fault: str, code: str
) -> None:
    state, url = hub
    name, repo, file = "piper-hi-pratham", VOICES, f"{PRATHAM}.onnx"
    catalogue = test_catalogue()
    kwargs: dict[str, object] = {}
    if fault == "listing-404":
        catalogue[name] = dataclasses.replace(catalogue[name], hub_revision="v9")
    elif fault == "listing-not-json":
        state.listing_body[repo] = b"<html>Too Many Requests</html>"
    elif fault == "listing-not-a-list":
        state.listing_body[repo] = b'{"error": "Repository not found"}'
    elif fault == "not-listed":
        del state.repos[repo][f"{PRATHAM}.onnx.json"]
    elif fault == "no-digest":
        state.entry[(repo, file)] = {"lfs": {"size": 4000}}
    elif fault == "bigger-than-listed":
        state.served[(repo, file)] = state.repos[repo][file] + b"extra"
    elif fault == "truncated":
        state.truncate.add((repo, file))
    elif fault == "download-404":
        state.gone.add((repo, file))
    elif fault == "timeout":
        state.slow_s = 1.0
        kwargs["download_timeout_s"] = 0.2
    with pytest.raises(AssetError) as err:
        make_store(cache, url, catalogue=catalogue, **kwargs).fetch(name, consent=True)
    assert err.value.code == code, err.value.message
    assert "Traceback" not in err.value.message and len(err.value.message) > 30
    assert leftovers(cache / name) == []
    if fault == "timeout":
        assert "timed out" in str(err.value)


def test_a_full_disk_is_found_before_downloading(
    hub: tuple[Hub, str], cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import collections

    import hearthd.assets

    state, url = hub
    usage = collections.namedtuple("usage", "total used free")
    monkeypatch.setattr(hearthd.assets.shutil, "disk_usage", lambda _: usage(10**9, 10**9 - 100, 100))
    with pytest.raises(AssetError) as err:
        make_store(cache, url).fetch("botpsy", consent=True)
    assert err.value.code == "asset-no-space"
    assert file_requests(state) == [] and leftovers(cache / "botpsy-0.8b") == []


def test_a_disk_that_fills_up_while_writing_leaves_nothing(
    hub: tuple[Hub, str], cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hearthd.assets

    _, url = hub

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(hearthd.assets.os, "fsync", full)
    with pytest.raises(AssetError) as err:
        make_store(cache, url).fetch("piper-hi-pratham", consent=True)
    assert err.value.code == "asset-no-space"
    assert leftovers(cache / "piper-hi-pratham") == []


def test_pins_come_only_over_https_or_loopback(cache: Path) -> None:
    s = AssetStore(cache_dir=cache, hub_url="http://hub.test", catalogue=test_catalogue())
    with pytest.raises(AssetError) as err:
        s.fetch("botpsy", consent=True)
    assert err.value.code == "asset-insecure-hub" and "https" in str(err.value)


def test_redirects_never_go_from_https_to_http() -> None:
    policy = _RedirectPolicy(same_origin=False)
    request = urllib.request.Request("https://hub.test/org/repo/resolve/main/x.gguf")
    with pytest.raises(urllib.error.HTTPError, match="https to http"):
        policy.redirect_request(request, None, 302, "Found", None, "http://cdn.test/x")  # type: ignore[arg-type]
    assert policy.redirect_request(request, None, 302, "Found", {}, "https://cdn.test/x") is not None  # type: ignore[arg-type]
    listing = _RedirectPolicy(same_origin=True)
    with pytest.raises(urllib.error.HTTPError, match="another host"):
        listing.redirect_request(request, None, 302, "Found", None, "https://elsewhere.test/x")  # type: ignore[arg-type]


def test_damaged_pins_are_an_error_and_refresh_rebuilds_them(hub: tuple[Hub, str], cache: Path) -> None:
    state, url = hub
    path = make_store(cache, url).fetch("botpsy", consent=True)
    (cache / "botpsy-0.8b" / "pins.json").write_text("{not json")
    with pytest.raises(AssetError) as err:
        make_store(cache, url).resolve("botpsy")
    assert err.value.code == "asset-pins-corrupt" and "--refresh" in str(err.value)
    assert make_store(cache, url).status("botpsy").source == "missing"
    assert make_store(cache, url).fetch("botpsy", consent=True, refresh=True) == path
    assert make_store(cache, url).resolve("botpsy") == path


def test_consent_does_not_extend_to_assets_that_have_a_pack(cache: Path) -> None:
    s = AssetStore(cache_dir=cache / "empty", hub_url="http://127.0.0.1:9", catalogue={
        "qwen2.5-coder-1.5b": CATALOGUE["qwen2.5-coder-1.5b"]})
    with pytest.raises(AssetMissing) as err:  # its pack is not installed here; no download is tried
        s.fetch("qwen2.5-coder-1.5b", consent=True)
    assert "pip install" in str(err.value)


# --- catalogue, TTS and CLI -------------------------------------------------------------------------


def test_catalogue_names_and_groups() -> None:
    for alias, target in ALIASES.items():
        assert target in CATALOGUE and alias not in CATALOGUE
    for group, members in GROUPS.items():
        assert group not in CATALOGUE and all(m in CATALOGUE for m in members)
    assert {CATALOGUE[m].config_key for m in GROUPS["voices"]} == {"tts.voices.en", "tts.voices.ru", "tts.voices.hi"}
    for spec in CATALOGUE.values():
        if spec.pin_from_listing:
            assert spec.hub_repo and not spec.dists
    quants = {f.hub_quant for n in ("botpsy-0.8b", "botpsy-0.8b-q8_0", "botpsy-0.8b-bf16") for f in CATALOGUE[n].files}
    assert quants == {"Q4_K_M", "Q8_0", "bf16"}
    assert all(CATALOGUE[n].hub_repo == BOTPSY for n in ("botpsy-0.8b", "botpsy-0.8b-q8_0", "botpsy-0.8b-bf16"))


def components_for(tmp_path: Path, store: AssetStore, voices: str = "") -> object:
    from hearthd.config import load_config
    from hearthd.daemon.components import Components

    cfg_file = tmp_path / "config.toml"
    cfg_file.write_text(f"[mqtt]\nenabled = false\n[dbus]\nenabled = false\n{voices}")
    return Components(load_config(cfg_file, environ={}), store=store)


def test_tts_speaks_a_fetched_voice_instead_of_espeak(
    hub: tuple[Hub, str], cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hearthd.audio.tts as tts

    _, url = hub
    made: list[tuple[str, object]] = []
    monkeypatch.setattr(tts, "PiperTextToSpeech", lambda path, scale=1.0: made.append(("piper", path)) or "piper")
    monkeypatch.setattr(tts, "EspeakTextToSpeech", lambda voice: made.append(("espeak", voice)) or "espeak")
    store = make_store(cache, url)
    ru = store.fetch("piper-ru-irina", consent=True)
    components = components_for(tmp_path, store)
    components.voices.voice("ru")  # type: ignore[attr-defined]
    components.voices.voice("hi")  # type: ignore[attr-defined]
    assert made == [("piper", ru), ("espeak", "hi")]  # hi not fetched: espeak-ng still speaks it
    made.clear()
    chosen = components_for(tmp_path, store, '[tts.voices]\nru = "espeak:ru+f3"\n')
    chosen.voices.voice("ru")  # type: ignore[attr-defined]
    assert made == [("espeak", "ru+f3")]  # an espeak voice the config chose is kept


def run_cli(capsys: pytest.CaptureFixture[str], config: Path, *args: str) -> tuple[int, str, str]:
    from hearthd.cli import main

    code = main(["--config", str(config), "models", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_fetch_botpsy_and_voices(
    hub: tuple[Hub, str], cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    state, url = hub
    for name, spec in test_catalogue().items():
        monkeypatch.setitem(CATALOGUE, name, spec)
    config = tmp_path / "config.toml"
    config.write_text(f'[assets]\ncache_dir = "{cache}"\nhub_url = "{url}"\n')
    code, out, err = run_cli(capsys, config, "fetch", "botpsy")
    path = cache / "botpsy-0.8b" / "BotPsy-0.8B-Q4_K_M.gguf"
    assert code == 0, err
    assert out.splitlines()[0] == f"botpsy-0.8b: {path}"
    assert "pins.json" in out and '[agent] model = "botpsy-0.8b"' in out and f'model_path = "{path}"' in out
    code, out, err = run_cli(capsys, config, "fetch", "botpsy", "--quant", "Q8_0")
    assert code == 0 and out.startswith("botpsy-0.8b-q8_0: ") and out.splitlines()[0].endswith("BotPsy-0.8B-Q8_0.gguf")
    code, out, err = run_cli(capsys, config, "fetch", "voices")
    assert code == 0, err
    lines = out.splitlines()
    assert [line.split(":")[0] for line in lines if not line.startswith(" ")] == [
        "piper-en-joe", "piper-ru-irina", "piper-hi-pratham"]
    # a fetched Piper voice speaks in place of each language's default offline voice
    assert "speaks ru in place of festival:msu_ru_nsh_clunits" in out and "speaks hi in place of kokoro:hf_alpha" in out
    code, out, err = run_cli(capsys, config, "list")
    rows = {line.split()[0]: line for line in out.splitlines()}
    assert rows["botpsy-0.8b"].split()[4] == "cache" and rows["botpsy-0.8b-bf16"].split()[4] == "missing"
    assert rows["piper-hi-pratham"].split()[4] == "cache"
    code, out, err = run_cli(capsys, config, "fetch", "botpsy", "--quant", "Q5_K_M")
    assert code == 1 and "asset-quant-unknown" in err
    del state.repos[BOTPSY]["BotPsy-0.8B-BF16.gguf"]
    code, out, err = run_cli(capsys, config, "fetch", "botpsy-0.8b-bf16", "botpsy")
    assert code == 1 and "asset-quant-missing" in err and out.startswith("botpsy-0.8b: ")  # the rest still ran


def test_cli_fetch_without_consent_obeys_allow_download(
    hub: tuple[Hub, str], cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state, url = hub
    config = tmp_path / "config.toml"
    config.write_text(f'[assets]\ncache_dir = "{cache}"\nhub_url = "{url}"\n[agent]\nmodel = "botpsy"\n'
                      '[stt]\nmodel = "botpsy-0.8b-q8_0"\n[tts.voices]\nen = "espeak:en"\n')
    code, out, err = run_cli(capsys, config, "fetch")  # the configured models, none named
    assert code == 1 and "botpsy-0.8b" in err and "hearthd models fetch botpsy-0.8b" in err
    assert state.requests == []
