"""Privacy: state private to the user (0700 dir, 0600 files), secrets masked in `config show`, no onnxruntime
telemetry on disk."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hearthd.cli import main
from hearthd.config import state_dir
from hearthd.daemon.audit import AuditLog
from hearthd.daemon.idempotency import DoneRequests
from hearthd.private import private_dir, private_file
from hearthd.tools.alarms import AlarmBook
from hearthd.tools.catalogue import Catalogue
from hearthd.tools.registry import ToolResult

ROOT = Path(__file__).resolve().parent.parent


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh XDG_STATE_HOME under the usual umask (022), which alone would make files 0644."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    old = os.umask(0o022)
    try:
        yield state_dir()
    finally:
        os.umask(old)


def write_everything(where: Path) -> None:
    """What the daemon writes: an alarm set, an audit line, a request recorded, the device catalogue saved."""
    book = AlarmBook(path=where / "alarms.db")
    book.add("07:30", "work")
    log = AuditLog(where / "audit.jsonl", max_bytes=200, keep=2)
    for i in range(3):  # past max_bytes: audit.jsonl.1 is made too
        log.write({"utterance": f"wake me at seven {i}" * 4})
    done = DoneRequests(where / "requests.db")
    done.put(DoneRequests.key("r1", 0, "set_alarm", {"time": "07:30"}), ToolResult(True, {"id": 1}))
    Catalogue(where / "devices.json").save()
    assert (where / "alarms.db-wal").exists() and (where / "alarms.db-shm").exists()  # checked below, open
    assert (where / "audit.jsonl.1").exists()
    files = sorted(p.name for p in where.iterdir())
    assert {"alarms.db", "audit.jsonl", "requests.db", "devices.json"} <= set(files)
    loose = {p.name: oct(mode(p)) for p in where.iterdir() if mode(p) != 0o600}
    assert loose == {}, f"state files readable by others: {loose}"
    book.close()
    done._db.close()


def test_state_files_are_0600_in_a_0700_directory(state: Path) -> None:
    write_everything(state)
    assert mode(state) == 0o700


def test_a_looser_state_dir_and_files_from_before_are_tightened(state: Path) -> None:
    state.mkdir(parents=True, mode=0o755)
    os.chmod(state, 0o755)
    for name in ("alarms.db", "alarms.db-wal", "alarms.db-shm", "requests.db", "audit.jsonl", "audit.jsonl.1",
                 "devices.json"):
        (state / name).touch()
        os.chmod(state / name, 0o644)
    (state / "alarms.db-wal").unlink()  # an empty -wal with no -shm is fine; a stale one is not needed here
    (state / "alarms.db-shm").unlink()
    write_everything(state)
    assert mode(state) == 0o700


def test_permissions_the_user_tightened_further_are_kept(tmp_path: Path) -> None:
    d = tmp_path / "d"
    d.mkdir(mode=0o500)
    os.chmod(d, 0o500)
    private_dir(d)
    assert mode(d) == 0o500
    f = tmp_path / "f"
    f.touch()
    os.chmod(f, 0o400)
    private_file(f)
    assert mode(f) == 0o400
    os.chmod(f, 0o664)
    private_file(f)
    assert mode(f) == 0o600


def test_config_show_masks_secrets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text('[mqtt]\nusername = "hearthd"\npassword = "hunter2"\n')
    assert main(["--config", str(cfg), "config", "show"]) == 0
    out = capsys.readouterr().out
    assert "hunter2" not in out and 'password = "********"' in out and 'username = "hearthd"' in out
    assert "max_tokens = 160" in out  # a number whose name says "token" is no secret
    assert main(["--config", str(cfg), "config", "show", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["mqtt"]["password"] == "********" and shown["mqtt"]["username"] == "hearthd"
    cfg.write_text("")
    assert main(["--config", str(cfg), "config", "show"]) == 0
    assert 'password = ""' in capsys.readouterr().out  # not set: shown empty, not masked


def test_onnxruntime_writes_no_telemetry(tmp_path: Path) -> None:
    """A stock onnxruntime wheel writes a device id and event queue under ~/.cache/Microsoft/DeveloperTools as
    soon as it is imported (checked: 1.32, without ORT_DISABLE_TELEMETRY); a VAD session made by hearthd writes
    nothing there."""
    pytest.importorskip("onnxruntime")
    pytest.importorskip("faster_whisper")
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), PYTHONPATH=str(ROOT))
    script = ("import numpy as np\nfrom hearthd.audio.vad import SpeechProbability\n"
              "print(SpeechProbability()(np.zeros(512, dtype=np.float32)))\n")
    subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path, check=True, capture_output=True,
                   timeout=120)
    written = [str(p.relative_to(home)) for p in home.rglob("*") if "Microsoft" in p.parts]
    assert written == []


def test_only_a_full_or_read_only_disk_counts_as_one(tmp_path: Path) -> None:
    """A write that failed because the disk is full or read-only becomes a StateWriteError that says so; any other
    error (a real I/O error on a disk with room) is not hidden behind it."""
    import errno
    import sqlite3

    from hearthd.private import write_problem

    path = tmp_path / "alarms.db"
    full = write_problem(OSError(errno.ENOSPC, "No space left on device"), path)
    assert full is not None and full.code == "state-disk-full" and full.message.endswith("alarms.db: the disk is full")
    ro = write_problem(OSError(errno.EROFS, "Read-only file system"), path)
    assert ro is not None and ro.code == "state-read-only"
    sql_full = sqlite3.OperationalError("database or disk is full")
    assert (p := write_problem(sql_full, path)) is not None and p.code == "state-disk-full"
    assert write_problem(sqlite3.OperationalError("disk I/O error"), path) is None  # tmp_path has room
    assert write_problem(sqlite3.OperationalError("no such table: alarms"), path) is None
    assert write_problem(ValueError("x"), path) is None
