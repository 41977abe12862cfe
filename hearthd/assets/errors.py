"""The errors of model resolution: one base with a stable `code`, and the two cases callers tell apart."""

from __future__ import annotations

from ..errors import HearthdError


class AssetError(HearthdError):
    """A model could not be provided; `code` is stable for programs, `message` is for people."""

    code = "asset-error"

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message, code or None)

    def __str__(self) -> str:
        return self.message


class AssetMissing(AssetError):
    """No source for the model: its pack is not installed, or only a (disabled) download has it."""

    code = "asset-missing"

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

    code = "asset-corrupt"
