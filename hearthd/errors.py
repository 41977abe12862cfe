"""The one base of every error a user can meet: a stable `code` (the `error` event's and the CLI's), a `message`
for logs (it may carry detail) and the `phrase_key` of the apology that is spoken (`locales/<lang>/phrases.toml`).

Subclasses set `code` and `phrase_key` at class level, so that `SttError("the service is down")` stays a typed
error with its code; an instance may override either. A stage of a turn meets what a library raises (a bare
RuntimeError, a KeyError…) as its own typed error through `wrapping`, as Home Assistant's assist_pipeline does
per stage, so a turn ends in one `error` event and one apology whatever failed.
"""

from __future__ import annotations


class HearthdError(Exception):
    """An error hearthd knows how to report: `code` for programs, `message` for logs, `phrase_key` for the user."""

    code: str = "internal"
    phrase_key: str = "error.internal"

    def __init__(self, message: str = "", code: str | None = None, phrase_key: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if phrase_key is not None:
            self.phrase_key = phrase_key

    @classmethod
    def wrapping(cls, error: BaseException, code: str | None = None) -> HearthdError:
        """`error` as this kind of error: a HearthdError is kept as it is (it already says what failed), anything
        else becomes `cls` with `code` and the original's type and text as its message (chained as its cause)."""
        if isinstance(error, HearthdError):
            return error
        wrapped = cls(f"{type(error).__name__}: {error}", code)
        wrapped.__cause__ = error
        return wrapped


__all__ = ["HearthdError"]
