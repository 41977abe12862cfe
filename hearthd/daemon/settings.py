"""What the user changed while hearthd ran (from Home Assistant or D-Bus): mute, the default language, the reply
volume, the wake word. Kept in `settings.json` in the state directory (0600), so a restart comes back as it was
left; a value set here overrides the config file's default until it is changed again (delete the file to go
back to the config). A damaged file is moved aside and the defaults used; a disk that cannot be written keeps the
settings for this run and says so once."""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from ..private import StateWriteError, move_aside, open_private, private_dir

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Settings:
    muted: bool = False
    language: str = ""  # "" = general.language of the config
    volume: int = 100  # percent of the voice's level, for replies and rings
    wake_word: str = ""  # "" = wake.model of the config


def _valid(raw: Any) -> Settings:
    if not isinstance(raw, dict):
        raise ValueError("not a JSON object")
    out = Settings()
    known = {f.name for f in fields(Settings)}
    for key, value in raw.items():
        if key not in known:
            continue  # a newer hearthd's setting: ignored, not fatal
        default = getattr(out, key)
        if type(value) is not type(default):
            raise ValueError(f"{key}: expected {type(default).__name__}")
        out = replace(out, **{key: value})
    if not 0 <= out.volume <= 100:
        raise ValueError("volume: expected 0-100")
    return out


class SettingsStore:
    """The settings of this hearthd; `change(...)` saves and tells the listeners what changed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.current = self._load()
        self.listeners: list[Callable[[Settings, set[str]], None]] = []
        self.unsaved = False  # the last change could not be written (full or read-only disk)

    def _load(self) -> Settings:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return Settings()
        except OSError as e:
            log.warning("cannot read %s (%s): using the defaults", self.path, e)
            return Settings()
        try:
            return _valid(json.loads(raw.decode("utf-8")))
        except ValueError as e:  # bad JSON (UnicodeDecodeError is one too) or a bad value: kept, not used
            with contextlib.suppress(OSError):
                move_aside(self.path, str(e))
            return Settings()

    def change(self, **values: Any) -> Settings:
        """Set some settings (unknown keys raise TypeError, bad values ValueError), save, tell the listeners."""
        new = _valid({**asdict(self.current), **values})
        changed = {k for k in values if getattr(new, k) != getattr(self.current, k)}
        if not changed:
            return new
        self.current = new
        self._save()
        for listener in list(self.listeners):
            try:
                listener(new, changed)
            except Exception:  # one broken listener must not keep the others from hearing it
                log.exception("a settings listener failed")
        return new

    def _save(self) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            private_dir(self.path.parent)
            fd = open_private(tmp, os.O_WRONLY | os.O_TRUNC)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(asdict(self.current), f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
            if self.unsaved:
                log.info("settings saved again to %s", self.path)
            self.unsaved = False
        except (OSError, StateWriteError) as e:
            with contextlib.suppress(OSError):
                tmp.unlink()
            if not self.unsaved:
                log.warning("cannot save the settings to %s (%s): they hold until hearthd stops", self.path, e)
            self.unsaved = True
