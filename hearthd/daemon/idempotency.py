"""Idempotency keys: a request that arrives twice (an automation retrying over MQTT, a client resending after a
timeout) does its actions once. The caller names the request; each call it makes is remembered under
(request id, position, tool, arguments) with its result, in SQLite under the state dir, for `ttl` seconds. A
repeat gets the remembered result back and nothing runs again.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from ..private import PrivateStore, StateWriteError, open_sqlite, reopen_writable, writing
from ..tools.registry import ToolResult

log = logging.getLogger(__name__)


class DoneRequests:
    def __init__(self, path: Path | None, ttl: float = 86400.0) -> None:
        # a 0700 directory, the database (and its journal) 0600; a corrupt one moved aside and a fresh one made
        self.store = PrivateStore()
        self.path = path
        self._db = open_sqlite(path, self._setup, self.store)
        self._lock = threading.Lock()
        self.ttl = ttl

    @staticmethod
    def _setup(db: sqlite3.Connection) -> None:
        db.execute("PRAGMA synchronous=FULL")
        db.execute("CREATE TABLE IF NOT EXISTS done (key TEXT PRIMARY KEY, at REAL NOT NULL, result TEXT NOT NULL)")

    @staticmethod
    def key(request_id: str, position: int, name: str, arguments: dict[str, Any]) -> str:
        return f"{request_id}\x1f{position}\x1f{name}\x1f{json.dumps(arguments, sort_keys=True, ensure_ascii=False)}"

    def _writable(self) -> None:
        """A store opened read-only (a full or read-only disk) is tried for writing again."""
        if self.store.read_only is not None and (db := reopen_writable(self.path, self._setup, self.store)):
            self.store.retired.append(self._db)
            self._db = db

    def get(self, key: str) -> ToolResult | None:
        with self._lock:
            self._writable()
            try:
                with writing(self.path, self.store):
                    self._db.execute("DELETE FROM done WHERE at < ?", (time.time() - self.ttl,))
            except StateWriteError:
                pass  # expired entries stay until the disk takes writes; the lookup below still answers
            row = self._db.execute("SELECT result FROM done WHERE key = ? AND at >= ?",
                                   (key, time.time() - self.ttl)).fetchone()
        if row is None:
            return None
        data = json.loads(row[0])
        return ToolResult(data["ok"], data["data"], data["phrase"], data["values"],
                          {k: (v[0], v[1]) for k, v in data["counts"].items()}, data["durations"])

    def put(self, key: str, result: ToolResult) -> None:
        blob = json.dumps({"ok": result.ok, "data": result.data, "phrase": result.phrase, "values": result.values,
                           "counts": result.counts, "durations": result.durations}, ensure_ascii=False, default=str)
        with self._lock:
            self._writable()
            try:
                with writing(self.path, self.store):
                    self._db.execute("INSERT OR REPLACE INTO done (key, at, result) VALUES (?, ?, ?)",
                                     (key, time.time(), blob))
            except StateWriteError as e:  # the action ran and was answered; only its retry guard is missing
                log.warning("%s: a retry of this request would run it again", e.message)
