"""The hub over the wire: its file listings (`/api/models/<repo>/tree/<rev>`) and its file downloads.

Both go over urllib's default https context (certificates verified). Redirects never step down from https to
http, and the listing, which is what pins are taken from, never leaves the configured hub: not by redirect and
not by a next-page link. What urllib raises becomes an AssetError that says what to do instead.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import json
import posixpath
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from typing import BinaryIO

from .cache import CHUNK_SIZE
from .catalogue import AssetFile, AssetSpec
from .errors import AssetCorrupt, AssetError
from .listing import Listing
from .progress import human

DOWNLOAD_TIMEOUT_S = 30.0
LISTING_MAX_BYTES = 16 << 20  # one page of a file listing; more is not a listing
LISTING_MAX_PAGES = 50
# Why reading a listing can be refused, as a hint after the HTTP status.
_LISTING_HINTS = {
    401: " (a private or gated repo)",
    403: " (a private or gated repo)",
    404: " (no such repo, revision or folder)",
}


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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


@contextlib.contextmanager
def _failures(
    doing: str, url: str, config_key: str, code: str, hints: Mapping[int, str] | None = None
) -> Iterator[None]:
    """What urllib raises in the block, as one AssetError(`code`): `doing` failed, and how to do without.

    `hints` adds a word after an HTTP status (401: a gated repo). AssetErrors raised in the block pass as they are.
    """
    try:
        yield
    except urllib.error.HTTPError as err:
        hint = (hints or {}).get(err.code, "")
        raise AssetError(
            f"{doing} failed: HTTP {err.code} {err.reason} from {url}{hint}. "
            f"Set {config_key} to a local copy instead.",
            code,
        ) from err
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as err:
        reason = getattr(err, "reason", err)
        raise AssetError(
            f"{doing} from {url} failed: {reason}. Check the network, or set "
            f"{config_key} to a local copy instead.",
            code,
        ) from err


class Hub:
    """The hub at `url` (no trailing slash), each request given up after `timeout_s` of silence."""

    def __init__(self, url: str, timeout_s: float = DOWNLOAD_TIMEOUT_S) -> None:
        self.url = url
        self.timeout_s = timeout_s

    # files

    def file_url(self, spec: AssetSpec, f: AssetFile) -> str:
        repo = urllib.parse.quote(spec.hub_repo or "", safe="/")
        revision = urllib.parse.quote(spec.hub_revision, safe="")
        file = urllib.parse.quote(f.hub_file or f.name, safe="/")
        return f"{self.url}/{repo}/resolve/{revision}/{file}"

    @contextlib.contextmanager
    def download(self, spec: AssetSpec, f: AssetFile, url: str) -> Iterator[Iterator[bytes]]:
        """The bytes of `f` from `url`, in chunks, held to its expected size; failures in the block (the
        caller's writing included) become AssetError(asset-download-failed)."""
        doing = f"Downloading {f.name} for '{spec.name}'"
        with (
            _failures(doing, url, spec.config_key, "asset-download-failed"),
            _open(url, self.timeout_s) as response,
        ):
            announced = response.headers.get("Content-Length", "")
            if announced.isdigit() and int(announced) > f.size:
                raise AssetCorrupt(
                    f"{url} announces {announced} bytes, more than the expected {f.size}; nothing was kept."
                )
            yield _response_chunks(response, spec, f, url)

    # listings

    def check_listing_transport(self, spec: AssetSpec) -> None:
        parts = urllib.parse.urlsplit(self.url)
        if parts.scheme == "https" or (parts.scheme == "http" and _is_loopback(parts.hostname or "")):
            return
        raise AssetError(
            f"hearthd takes the sha256 of '{spec.name}' from the hub's listing only over https, with the "
            f"certificate verified; assets.hub_url is {self.url}. Use an https hub, or set {spec.config_key} "
            f"to a copy you have.",
            "asset-insecure-hub",
        )

    def listing_url(self, spec: AssetSpec, folder: str) -> str:
        repo = urllib.parse.quote(spec.hub_repo or "", safe="/")
        revision = urllib.parse.quote(spec.hub_revision, safe="")
        where = f"/{urllib.parse.quote(folder, safe='/')}" if folder else ""
        return f"{self.url}/api/models/{repo}/tree/{revision}{where}?recursive=true"

    def read_listing(self, spec: AssetSpec) -> Listing:
        """The hub's file entries for the asset's folders, by path, each with the listing URL it came from.

        Files in a folder (Piper voices) list only that folder: the voice repo has thousands of files. Long
        listings come in pages (a Link rel="next" header), which are followed on the same hub only.
        """
        folders = {
            "" if f.hub_quant or not f.hub_file else posixpath.dirname(f.hub_file) for f in spec.files
        }
        if "" in folders:
            folders = {""}
        entries: Listing = {}
        for folder in sorted(folders):
            first = url = self.listing_url(spec, folder)
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
        if url.startswith(self.url + "/"):
            return url
        parts = urllib.parse.urlsplit(url)
        if parts.path.startswith("/api/"):
            return self.url + parts.path + (f"?{parts.query}" if parts.query else "")
        raise AssetError(
            f"The hub's listing {came_from} points its next page off the hub: {url}", "asset-listing-invalid"
        )

    def _listing_page(self, spec: AssetSpec, url: str) -> tuple[bytes, str | None]:
        doing = f"Reading the hub's listing of {spec.hub_repo}@{spec.hub_revision}"
        with (
            _failures(doing, url, spec.config_key, "asset-listing-failed", _LISTING_HINTS),
            _open(url, self.timeout_s, same_origin=True) as response,
        ):
            body = response.read(LISTING_MAX_BYTES + 1)
            link = response.headers.get("Link")
        if len(body) > LISTING_MAX_BYTES:
            raise AssetError(
                f"The hub's listing {url} is larger than {human(LISTING_MAX_BYTES)}.", "asset-listing-invalid"
            )
        return body, link


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
