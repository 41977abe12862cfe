"""The audit trail: one JSON line per turn under the state dir, rotated by size, read by `hearthd history`.

What was heard (or only its sha256 in privacy mode), in which language, what the model or the templates
proposed, what the confirmation policy decided and what the user answered, what ran and how it went, what
was said back, and how long each stage took. Written from the turn's trace events, so it records what
happened rather than what the code meant to do.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..events import (
    AbstainEvent,
    ClarifyEvent,
    ConfirmAnswerEvent,
    ConfirmRequestEvent,
    ErrorEvent,
    Event,
    ReplyEvent,
    TimingEvent,
    ToolCallEvent,
    ToolResultEvent,
    TranscriptEvent,
)
from ..private import StateWriteError, open_private, private_dir, private_file, write_problem

log = logging.getLogger(__name__)

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
        # Turns that could not be written (a full or read-only disk): never dropped silently. `lost` counts those
        # since the last record that was written (that next record says how many: its "lost" field), `lost_total`
        # all of this process, `last_loss` says why the last one failed ("" when none has).
        self.lost = 0
        self.lost_total = 0
        self.unreadable: list[str] = []  # files `tail` found but could not read (permissions, a directory, a loop)
        self.last_loss = ""

    def turn(self, utterance: str, lang: str, events: list[Event]) -> dict[str, Any]:
        """The record of one turn, from its trace events."""
        entry: dict[str, Any] = {"ts": datetime.now(UTC).isoformat(timespec="seconds"), "lang": lang}
        if self.privacy:
            entry["utterance_sha256"] = hashlib.sha256(utterance.encode("utf-8", "surrogatepass")).hexdigest()
        else:
            entry["utterance"] = utterance
        proposed, results, timings = [], [], {}
        policy = "not_needed"
        for e in events:
            match e:
                case TranscriptEvent() if e.conversation:
                    entry["conversation"] = e.conversation  # who asked: "local", "dbus:<sender>", "mqtt:<id>"
                case ToolCallEvent():
                    proposed.append({"name": e.name, "arguments": e.arguments, "source": e.source})
                case ConfirmRequestEvent():
                    proposed.extend({"name": c["name"], "arguments": c["arguments"]} for c in e.calls)
                    policy = "asked"
                case ConfirmAnswerEvent():
                    entry["answer"] = e.answer
                    policy = "confirmed" if e.answer == "yes" else "declined"
                case AbstainEvent():
                    entry["abstain"] = e.reason
                case ClarifyEvent():
                    entry["clarify"] = {"name": e.name, "missing": e.missing}
                case ToolResultEvent():
                    results.append({"name": e.name, "ok": e.ok})
                case ReplyEvent():
                    entry["reply"] = "" if self.privacy else e.text
                case ErrorEvent():
                    entry["error"] = e.code
                case TimingEvent():
                    timings[str(e.stage)] = e.ms
        entry.update(proposed=proposed, policy=policy, results=results, timings=timings)
        return entry

    def write(self, entry: dict[str, Any]) -> bool:
        """Append one record; False when it could not be written, which is counted (`lost`), logged, and told by
        the next record that is written. A write cut short by a full disk is taken back: no torn line is left for
        the next record to be glued to."""
        with self._lock:
            if self.lost:
                entry = {**entry, "lost": self.lost}  # turns before this one that are not in the log
            data = _line(entry)
            try:
                private_dir(self.path.parent)  # the words in clear: 0700 directory, 0600 files
                if not self._tightened:
                    for name in self._files():
                        private_file(name)
                    self._tightened = True
                if self.path.exists() and self.path.stat().st_size + len(data) > self.max_bytes:
                    self._rotate()
                self._append(data)
            except (OSError, StateWriteError) as e:  # (the latter: no directory can be made where it should be)
                self.lost += 1
                self.lost_total += 1
                problem = write_problem(e, self.path)
                self.last_loss = problem.message if problem else f"cannot write {self.path}: {e}"
                log.warning("audit: this turn is not recorded (%d not recorded since the last that was): %s",
                            self.lost, self.last_loss)
                return False
            if self.lost:
                log.warning("audit: recording again; %d turn%s before this one could not be recorded", self.lost,
                            "" if self.lost == 1 else "s")
                self.lost = 0
            return True

    def _append(self, data: bytes) -> None:
        fd = open_private(self.path, os.O_RDWR | os.O_APPEND)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                data = b"\n" + data  # a line torn by a crash stays a line of its own (tail() skips it)
            try:
                done = 0
                while done < len(data):
                    done += os.write(fd, data[done:])
                os.fsync(fd)
            except OSError:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, size)
                raise
        finally:
            os.close(fd)

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
        self.unreadable = []
        for file in self._files():
            if len(out) >= n or not os.path.lexists(file):
                continue
            try:
                lines = file.read_bytes().splitlines()
            except OSError as e:  # an unreadable file: the others still show, and it is said which and why
                self.unreadable.append(f"{file}: {e.strerror or e}")
                continue
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


def _line(entry: dict[str, Any]) -> bytes:
    """One record as a line of UTF-8 JSON. Text no UTF-8 can hold (a lone surrogate come in from outside) is
    written as JSON's \\u escapes instead, the record all ASCII: the turn is recorded either way."""
    try:
        return (json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(entry, ensure_ascii=True) + "\n").encode("ascii")
