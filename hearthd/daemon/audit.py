"""The audit trail: one JSON line per turn under the state dir, rotated by size, read by `hearthd history`.

What was heard (or only its sha256 in privacy mode), in which language, what the model or the templates
proposed, what the confirmation policy decided and what the user answered, what ran and how it went, what
was said back, and how long each stage took. Written from the turn's trace events, so it records what
happened rather than what the code meant to do.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..events import Event, EventType
from ..private import open_private, private_dir, private_file


class AuditLog:
    """Append-only JSON lines at `path`; at `max_bytes` the file becomes path.1 (older ones shift, `keep` kept)."""

    def __init__(self, path: Path, max_bytes: int = 1_000_000, keep: int = 3, privacy: bool = False) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.keep = keep
        self.privacy = privacy
        self._lock = threading.Lock()
        self.skipped = 0  # lines the last tail() could not read
        self._tightened = False  # files an older hearthd left looser than 0600 are tightened on the first write

    def turn(self, utterance: str, lang: str, events: list[Event]) -> dict[str, Any]:
        """The record of one turn, from its trace events."""
        entry: dict[str, Any] = {"ts": datetime.now(UTC).isoformat(timespec="seconds"), "lang": lang}
        if self.privacy:
            entry["utterance_sha256"] = hashlib.sha256(utterance.encode("utf-8")).hexdigest()
        else:
            entry["utterance"] = utterance
        proposed, results, timings = [], [], {}
        policy = "not_needed"
        for e in events:
            f = e.fields
            if e.type == EventType.TOOL_CALL:
                proposed.append({"name": f.get("name"), "arguments": f.get("arguments"), "source": f.get("source")})
            elif e.type == EventType.CONFIRM_REQUEST:
                proposed.extend({"name": c["name"], "arguments": c["arguments"]} for c in f.get("calls", []))
                policy = "asked"
            elif e.type == EventType.CONFIRM_ANSWER:
                entry["answer"] = f.get("answer")
                policy = "confirmed" if f.get("answer") == "yes" else "declined"
            elif e.type == EventType.ABSTAIN:
                entry["abstain"] = f.get("reason")
            elif e.type == EventType.CLARIFY:
                entry["clarify"] = {"name": f.get("name"), "missing": f.get("missing")}
            elif e.type == EventType.TOOL_RESULT:
                results.append({"name": f.get("name"), "ok": f.get("ok")})
            elif e.type == EventType.REPLY:
                entry["reply"] = "" if self.privacy else f.get("text")
            elif e.type == EventType.ERROR:
                entry["error"] = f.get("code")
            elif e.type == EventType.TIMING:
                timings[str(f.get("stage"))] = f.get("ms")
        entry.update(proposed=proposed, policy=policy, results=results, timings=timings)
        return entry

    def write(self, entry: dict[str, Any]) -> None:
        line = json.dumps(entry, ensure_ascii=False) + "\n"
        with self._lock:
            try:
                private_dir(self.path.parent)  # the words in clear: 0700 directory, 0600 files
                if not self._tightened:
                    for name in self._files():
                        private_file(name)
                    self._tightened = True
                if self.path.exists() and self.path.stat().st_size + len(line.encode()) > self.max_bytes:
                    self._rotate()
                with open(open_private(self.path, os.O_WRONLY | os.O_APPEND), "a", encoding="utf-8") as f:
                    f.write(line)
                    f.flush()
                    os.fsync(f.fileno())
            except OSError:
                pass  # an unwritable audit dir must not stop the assistant; `hearthd doctor` reports it

    def _rotate(self) -> None:
        for i in range(self.keep - 1, 0, -1):
            older = self.path.with_name(f"{self.path.name}.{i}")
            if older.exists():
                os.replace(older, self.path.with_name(f"{self.path.name}.{i + 1}"))
        os.replace(self.path, self.path.with_name(f"{self.path.name}.1"))

    def _files(self) -> list[Path]:
        """The log and its rotated files, newest first."""
        return [self.path] + [self.path.with_name(f"{self.path.name}.{i}") for i in range(1, self.keep + 1)]

    def tail(self, n: int) -> list[dict[str, Any]]:
        """The last n records, oldest first, across rotated files. A line that is no record (a torn last line after a
        crash, a bad byte, JSON that is not an object) is skipped and counted in `self.skipped`, never fatal."""
        out: list[dict[str, Any]] = []
        self.skipped = 0
        for file in self._files():
            if len(out) >= n or not file.exists():
                continue
            try:
                lines = file.read_bytes().splitlines()
            except OSError:
                continue  # an unreadable rotated file: the others still show
            rows = []
            for line in lines:
                if not line.strip():
                    continue
                try:
                    row = json.loads(line.decode("utf-8"))
                except ValueError:  # UnicodeDecodeError and JSONDecodeError both
                    row = None
                if isinstance(row, dict):
                    rows.append(row)
                else:
                    self.skipped += 1
            out = rows[-(n - len(out)):] + out
        return out[-n:]
