"""A full or read-only disk under the state dir fails only what must write, with a clear error; reads still work; the
audit never loses a turn silently.

The disk is real: a small tmpfs mounted over the state dir (`mount -t tmpfs -o size=...`), filled to the last byte
or remounted read-only (`mount -o remount,ro`). Root in CI can do both; a chmod would not stop root. Where mounting is
not allowed (not root, no CAP_SYS_ADMIN in the container) these tests skip and say so.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from hearthd.config import state_dir
from hearthd.daemon.audit import AuditLog
from hearthd.daemon.scheduler import Scheduler
from hearthd.private import StateWriteError
from hearthd.tools.alarms import AlarmBook

CONFIG = "[mqtt]\nenabled = false\n[dbus]\nenabled = false\n[wake]\nenabled = false\n"


class Disk:
    """A tmpfs of `size` bytes at `root`: fill it, free it, make it read-only or writable again."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._fill = root / ".fill"

    def fill(self) -> None:
        """Every byte taken (tmpfs allocates in pages: what is left in a file's last page stays usable)."""
        for block in (4096, 1):
            with contextlib.suppress(OSError), open(self._fill, "ab", buffering=0) as f:
                while True:
                    f.write(b"\0" * block)
        assert os.statvfs(self.root).f_bavail == 0

    def free(self) -> None:
        self._fill.unlink(missing_ok=True)

    def read_only(self, on: bool = True) -> None:
        subprocess.run(["mount", "-o", f"remount,{'ro' if on else 'rw'}", str(self.root)], check=True,
                       capture_output=True)


@pytest.fixture
def disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Disk]:
    root = tmp_path / "disk"
    root.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", str(root)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs to make a real full/read-only disk (needs root with CAP_SYS_ADMIN): "
                    f"{proc.stderr.strip()}")
    monkeypatch.setenv("XDG_STATE_HOME", str(root))
    state_dir().mkdir(mode=0o700)
    try:
        yield Disk(root)
    finally:
        subprocess.run(["umount", "-l", str(root)], capture_output=True)


def hearthd(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "config.toml"
    config.write_text(CONFIG)
    return subprocess.run([sys.executable, "-m", "hearthd", "--config", str(config), *args], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "HEARTHD_DEBUG": ""})


def reply(proc: subprocess.CompletedProcess[str]) -> str:
    events = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
    return [e["text"] for e in events if e["type"] == "reply"][-1]


def errors(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return [e["code"] for e in (json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{"))
            if e["type"] == "error"]


def test_a_full_disk_still_lists_alarms_and_fails_only_a_new_one_out_loud(disk: Disk, tmp_path: Path) -> None:
    """It was `hearthd: internal: disk I/O error` for every command, reads too."""
    assert reply(hearthd(tmp_path, "ask", "set an alarm for 7:30", "--json")) == "Alarm set for 7:30."
    disk.fill()
    listed = hearthd(tmp_path, "ask", "what alarms do I have", "--json")
    assert listed.returncode == 0, listed.stderr
    assert reply(listed) == "You have one alarm, at 7:30."
    assert "read-only until it can be written" in listed.stderr and "the disk is full" in listed.stderr

    refused = hearthd(tmp_path, "ask", "set an alarm for 8:30", "--json")
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert reply(refused) == "Sorry, I can't save that: the disk is full."
    assert "state-disk-full" in errors(refused)
    assert "cannot save to" in refused.stdout and "alarms.db: the disk is full" in refused.stdout

    disk.free()  # room again: the next command writes as before, nothing was lost
    assert reply(hearthd(tmp_path, "ask", "set an alarm for 8:30", "--json")) == "Alarm set for 8:30."
    # both alarms, the next to ring first: which that is depends on the hour the test runs (a real clock, another
    # process), so either order is right
    assert reply(hearthd(tmp_path, "ask", "what alarms do I have", "--json")) in (
        "You have 2 alarms: 7:30, 8:30.", "You have 2 alarms: 8:30, 7:30.")


def test_a_read_only_state_dir_runs_the_daemon_and_answers_reads(disk: Disk, tmp_path: Path) -> None:
    """`run --headless` would not start on a read-only state dir."""
    assert reply(hearthd(tmp_path, "ask", "set an alarm for 7:30", "--json")) == "Alarm set for 7:30."
    disk.read_only()
    listed = hearthd(tmp_path, "ask", "what alarms do I have", "--json")
    assert listed.returncode == 0, listed.stderr
    assert reply(listed) == "You have one alarm, at 7:30."
    assert "audit-not-recorded" in errors(listed)  # the turn is answered, and the missing record is said
    cancel = hearthd(tmp_path, "ask", "cancel the alarm at 7:30", "--json")
    assert reply(cancel) == "Sorry, I can't save that: my storage is read-only." and "state-read-only" in errors(cancel)

    config = tmp_path / "config.toml"
    daemon = subprocess.Popen([sys.executable, "-m", "hearthd", "--config", str(config), "run", "--headless",
                               "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert daemon.stdout is not None
        ready = ""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and daemon.poll() is None:
            line = daemon.stdout.readline()
            if '"type": "ready"' in line:
                ready = line
                break
        assert ready, daemon.stderr.read() if daemon.poll() is not None else "no ready event in 60 s"
        assert json.loads(ready)["pending"] == 1
    finally:
        daemon.send_signal(signal.SIGTERM)
        _, err = daemon.communicate(timeout=60)
    assert daemon.returncode == 0, err
    assert "the disk is read-only" in err and "Traceback" not in err
    disk.read_only(False)
    assert reply(hearthd(tmp_path, "ask", "what alarms do I have", "--json")) == "You have one alarm, at 7:30."


def test_a_nearly_full_disk_loses_no_audit_turn_silently(disk: Disk, tmp_path: Path,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    """Turns were dropped without a word, and a write cut short left a torn line that swallowed the next record."""
    log = AuditLog(state_dir() / "audit.jsonl")
    assert log.write({"utterance": "first", "reply": "ok"})
    disk.fill()  # what is left of the log's last page is all the room there is
    with caplog.at_level(logging.WARNING):
        assert not log.write({"utterance": "lost " + "x" * 8000, "reply": "ok"})
        assert not log.write({"utterance": "lost too " + "y" * 8000, "reply": "ok"})
    assert log.lost == 2 and "the disk is full" in log.last_loss
    assert any("not recorded" in r.getMessage() and "the disk is full" in r.getMessage() for r in caplog.records)
    assert [r["utterance"] for r in log.tail(10)] == ["first"] and log.skipped == 0  # no torn line left behind
    assert log.write({"utterance": "short", "reply": "ok"})  # it fits in what is left: it says what is missing
    rows = log.tail(10)
    assert [r["utterance"] for r in rows] == ["first", "short"] and rows[-1]["lost"] == 2 and log.lost == 0
    disk.free()
    assert log.write({"utterance": "after", "reply": "ok"}) and "lost" not in log.tail(1)[0]

    history = hearthd(tmp_path, "history")
    assert "(2 turns before this one could not be recorded)" in history.stdout
    doctor = hearthd(tmp_path, "doctor")
    assert "audit trail: 2 turns could not be recorded" in doctor.stdout


def test_doctor_says_the_state_disk_is_full(disk: Disk, tmp_path: Path) -> None:
    disk.fill()
    proc = hearthd(tmp_path, "doctor")
    assert "state directory" in proc.stdout and "the disk is full" in proc.stdout and "free some space" in proc.stdout
    assert "Traceback" not in proc.stderr


def test_an_alarm_rings_and_stops_on_a_read_only_disk_and_is_saved_once_it_can_be(disk: Disk) -> None:
    """Ringing and stopping must happen whether or not they can be saved; they are saved when the disk is back."""
    zone = ZoneInfo("Europe/Berlin")
    clock = [datetime(2026, 3, 2, 7, 0, tzinfo=zone)]
    path = state_dir() / "alarms.db"
    book = AlarmBook(now=lambda: clock[0], path=path)
    book.add("07:30", "wake up")
    book.close()
    disk.read_only()
    book = AlarmBook(now=lambda: clock[0], path=path)
    assert book.store.read_only is not None and book.store.read_only.code == "state-read-only"
    rings: list[str] = []

    async def ring(alarm, n: int) -> None:  # type: ignore[no-untyped-def]
        rings.append(alarm.label)

    scheduler = Scheduler(book, ring)
    assert scheduler.start() == []
    clock[0] += timedelta(minutes=31)
    asyncio.run(scheduler.tick())
    assert rings == ["wake up"]
    stopped = asyncio.run(book.stop({}))
    assert stopped.ok and stopped.phrase == "alarm.stopped"
    asyncio.run(scheduler.tick())
    assert rings == ["wake up"] and book.pending() == []  # stopped: it does not ring again
    disk.read_only(False)
    assert asyncio.run(book.set_alarm({"time": "09:00", "label": uuid.uuid4().hex[:8]})).ok  # writes again
    again = AlarmBook(now=lambda: clock[0], path=path)
    assert [a.hhmm for a in again.pending()] == ["09:00"]  # the stop made on the read-only disk was saved too


def test_an_alarm_rings_and_stops_on_a_disk_that_fills_up_and_new_ones_fail_out_loud(disk: Disk) -> None:
    zone = ZoneInfo("Europe/Berlin")
    clock = [datetime(2026, 3, 2, 7, 0, tzinfo=zone)]
    path = state_dir() / "alarms.db"
    book = AlarmBook(now=lambda: clock[0], path=path)
    book.add("07:30", "wake up")
    rings: list[str] = []

    async def ring(alarm, n: int) -> None:  # type: ignore[no-untyped-def]
        rings.append(alarm.label)

    scheduler = Scheduler(book, ring)
    disk.fill()  # while the daemon runs
    clock[0] += timedelta(minutes=31)
    asyncio.run(scheduler.tick())
    assert rings == ["wake up"] and [a.label for a in book.ringing()] == ["wake up"]
    assert asyncio.run(book.stop({})).phrase == "alarm.stopped" and book.ringing() == []
    with pytest.raises(StateWriteError) as refused:  # what the user asks to keep is refused, not pretended
        asyncio.run(book.set_alarm({"time": "09:00"}))
    assert refused.value.code == "state-disk-full"
    assert [a.hhmm for a in book.pending()] == []
    disk.free()
    assert asyncio.run(book.set_alarm({"time": "09:00"})).ok
    again = AlarmBook(now=lambda: clock[0], path=path)
    assert [(a.hhmm, a.state) for a in again.pending()] == [("09:00", "pending")]
    assert again.ringing() == []  # the stop made while the disk was full was saved
