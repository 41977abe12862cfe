"""State that degrades, never takes everything down: a corrupt alarms.db / requests.db / devices.json is moved aside
(kept, renamed with a UTC timestamp, 0600), reported, and a fresh store used; a locked store is left alone; a bad
line of audit.jsonl is skipped by `hearthd history`."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hearthd.config import state_dir
from hearthd.daemon.audit import AuditLog
from hearthd.daemon.idempotency import DoneRequests
from hearthd.tools.alarms import AlarmBook
from hearthd.tools.catalogue import Catalogue
from hearthd.tools.registry import ToolResult

ROOT = Path(__file__).resolve().parent.parent
GARBAGE = b"this is not an sqlite database \x00\xff\xfe" * 64


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    d = state_dir()
    d.mkdir(parents=True, mode=0o700)
    yield d


def kept(path: Path) -> Path:
    """The one moved-aside copy of `path`, checked to be named <name>.corrupt-YYYYmmddTHHMMSSZ and 0600."""
    copies = sorted(p for p in path.parent.glob(path.name + ".corrupt-*") if not p.name.endswith(("-wal", "-shm")))
    assert len(copies) == 1, copies
    stamp = copies[0].name.rsplit(".corrupt-", 1)[1]
    assert len(stamp) == 16 and stamp[8] == "T" and stamp.endswith("Z") and stamp[:8].isdigit(), stamp
    assert stat.S_IMODE(copies[0].stat().st_mode) & 0o077 == 0
    return copies[0]


def test_a_garbage_alarms_db_is_kept_aside_and_a_fresh_one_works(state: Path,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    path = state / "alarms.db"
    path.write_bytes(GARBAGE)
    with caplog.at_level(logging.WARNING):
        book = AlarmBook(path=path)
    copy = kept(path)
    assert copy.read_bytes() == GARBAGE
    assert book.store.moved_aside == copy
    assert any(str(copy) in r.getMessage() and "corrupt" in r.getMessage() for r in caplog.records)
    asyncio.run(book.set_alarm({"time": "07:30"}))
    listed = asyncio.run(book.list_alarms({}))
    assert [a["time"] for a in listed.data["alarms"]] == ["07:30"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    book.close()
    again = AlarmBook(path=path)  # the fresh store is a sound one: kept across a restart, nothing moved again
    assert [a.hhmm for a in again.pending()] == ["07:30"] and again.store.moved_aside is None
    kept(path)


def test_a_malformed_alarms_db_is_kept_aside(state: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A real SQLite header with damaged pages ("database disk image is malformed"), not just garbage."""
    path = state / "alarms.db"
    book = AlarmBook(path=path)
    for _ in range(50):
        book.add("07:30", "x" * 30)
    book.close()
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    data[page + 100: 2 * page] = b"\xa5" * (page - 100)  # page 2 overwritten
    data[2 * page: 3 * page] = b"\x5a" * page
    path.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING):
        fresh = AlarmBook(path=path)
    assert kept(path).read_bytes() == bytes(data)
    assert fresh.pending() == []
    asyncio.run(fresh.set_alarm({"time": "06:00"}))
    assert [a.hhmm for a in fresh.pending()] == ["06:00"]


def test_an_empty_alarms_db_is_new_but_reported(state: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = state / "alarms.db"
    path.write_bytes(b"")
    with caplog.at_level(logging.WARNING):
        book = AlarmBook(path=path)
    assert book.store.was_empty and book.store.moved_aside is None
    assert any("empty file where a database was expected" in r.getMessage() and str(path) in r.getMessage()
               for r in caplog.records)
    asyncio.run(book.set_alarm({"time": "07:30"}))
    assert [a.hhmm for a in book.pending()] == ["07:30"]


def test_a_new_alarms_db_is_not_reported(state: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        book = AlarmBook(path=state / "alarms.db")
        book.close()
        AlarmBook(path=state / "alarms.db").close()
    assert not caplog.records
    assert not list(state.glob("*.corrupt-*"))


def test_a_locked_alarms_db_is_not_moved_aside(state: Path) -> None:
    path = state / "alarms.db"
    book = AlarmBook(path=path)
    book.add("07:30")
    book.close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            AlarmBook(path=path)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert not list(state.glob("*.corrupt-*"))
    assert [a.hhmm for a in AlarmBook(path=path).pending()] == ["07:30"]


def test_a_garbage_requests_db_is_kept_aside_and_requests_are_recorded(state: Path,
                                                                       caplog: pytest.LogCaptureFixture) -> None:
    path = state / "requests.db"
    path.write_bytes(GARBAGE)
    with caplog.at_level(logging.WARNING):
        done = DoneRequests(path)
    copy = kept(path)
    assert copy.read_bytes() == GARBAGE and done.store.moved_aside == copy
    assert any(str(copy) in r.getMessage() for r in caplog.records)
    key = DoneRequests.key("r1", 0, "set_alarm", {"time": "07:30"})
    done.put(key, ToolResult(True, {"id": 1}, "alarm.set"))
    again = DoneRequests(path).get(key)
    assert again is not None and again.ok and again.data == {"id": 1}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.parametrize("content", [b"[]", b"{not json", b"\xff\xfe garbage", b'{"entities": [{"key": 1}]}', b"42"])
def test_a_devices_json_that_is_no_catalogue_is_kept_aside(state: Path, caplog: pytest.LogCaptureFixture,
                                                          content: bytes) -> None:
    path = state / "devices.json"
    path.write_bytes(content)
    with caplog.at_level(logging.WARNING):
        cat = Catalogue(path)
    copy = kept(path)
    assert copy.read_bytes() == content and cat.moved_aside == copy
    assert any(str(copy) in r.getMessage() for r in caplog.records)
    assert cat.entities == {} and not path.exists()
    cat.save()  # the fresh catalogue is written; the kept copy is untouched
    assert json.loads(path.read_text()) == {"entities": [], "states": {}}
    assert copy.read_bytes() == content
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_good_devices_json_is_loaded_not_moved(state: Path) -> None:
    path = state / "devices.json"
    path.write_text(json.dumps({"entities": [], "states": {}}))
    assert Catalogue(path).moved_aside is None and path.exists()
    assert not list(state.glob("*.corrupt-*"))


def test_history_skips_a_bad_line_of_the_audit_log(state: Path) -> None:
    audit = AuditLog(state / "audit.jsonl")
    audit.write({"ts": "2026-12-01T10:00:00+00:00", "lang": "en", "utterance": "set an alarm for seven",
                 "proposed": [{"name": "set_alarm", "arguments": {"time": "07:00"}}], "policy": "not_needed",
                 "results": [{"name": "set_alarm", "ok": True}], "reply": "Alarm set for 7:00."})
    with open(state / "audit.jsonl", "ab") as f:
        f.write(b'{"ts": "2026-12-01T10:01:00+00:00", "utter\xff\xfeance": "bro\x00ken\n')
        f.write(b"[1, 2]\n")
    audit.write({"ts": "2026-12-01T10:02:00+00:00", "lang": "ru", "utterance": "какая погода",
                 "proposed": [], "policy": "not_needed", "results": [], "reply": "Не знаю."})
    assert [r["lang"] for r in audit.tail(20)] == ["en", "ru"] and audit.skipped == 2
    env = {**os.environ, "XDG_STATE_HOME": str(state.parent)}
    out = subprocess.run([sys.executable, "-m", "hearthd", "history"], env=env, capture_output=True, text=True,
                         timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "set an alarm for seven" in out.stdout and "какая погода" in out.stdout
    assert "set_alarm:ok" in out.stdout
    assert "skipped 2 unreadable lines" in out.stderr


def test_opening_a_store_twice_in_one_process_keeps_the_first_connection_working(state: Path) -> None:
    """The daemon and a one-shot part (a reload, a test's Components) open the same alarms.db in one process.
    Opening the file again must not drop the first connection's SQLite locks (closing any descriptor of a file
    releases all of a process's POSIX locks on it): otherwise another process, seeing no one else, removes the
    WAL files when it closes, and the first connection fails with "disk I/O error"."""
    db = state / "alarms.db"
    first = AlarmBook(path=db)
    first.add("06:10")
    AlarmBook(path=db).add("07:10")  # a second opening in this process
    other = ("import sys; from pathlib import Path; from hearthd.tools.alarms import AlarmBook; "
             "AlarmBook(path=Path(sys.argv[1])).add('08:10')")
    subprocess.run([sys.executable, "-c", other, str(db)], check=True, timeout=60)
    first.add("09:10")
    again = AlarmBook(path=db)  # a new connection in this process shares the first one's view of the WAL index
    again.add("10:10")
    # every alarm is there, whichever rings next (pending() is in ringing order, which depends on the time of day)
    assert sorted(a.hhmm for a in first.pending()) == ["06:10", "07:10", "08:10", "09:10", "10:10"]
    assert first._db.execute("PRAGMA quick_check").fetchall() == [("ok",)]


async def test_a_model_that_cannot_load_is_reported_once_and_the_fast_path_answers(
        base_config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
        caplog: pytest.LogCaptureFixture) -> None:
    """Every model turn ends with its code and the apology, but the broken file is logged once and recorded once on
    Components.problems (what `hearthd doctor`, the log and the MQTT diagnostic read), not once per turn."""
    import copy

    from hearthd.daemon.components import Components
    from hearthd.daemon.pipeline import Pipeline
    from hearthd.events import EventType, Trace
    from hearthd.locale import phrase

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF" + b"\x03\x00\x00\x00" + os.urandom(4096))  # a GGUF magic, then garbage: truncated
    cfg = copy.deepcopy(base_config)
    cfg.agent.model_path, cfg.agent.fast_path, cfg.mqtt.enabled, cfg.dbus.enabled = str(model), True, False, False
    c = Components(cfg)
    assert c.problems == {}
    pipeline = Pipeline(c, Trace())
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            result = await pipeline.run_text("tell me something about the moon", language="en")
            assert result.reply == phrase("en", "error.internal") and result.error == "agent-model-invalid"
    warnings = [r for r in caplog.records if "cannot be loaded" in r.getMessage()]
    assert len(warnings) == 1 and str(model) in warnings[0].getMessage()
    assert set(c.problems) == {"agent"} and str(model) in c.problems["agent"]
    assert c.last_problem.startswith("agent: ") and str(model) in c.last_problem
    assert [e.code for e in pipeline.trace.of_type(EventType.ERROR)] == 3 * ["agent-model-invalid"]
    done = await pipeline.run_text("set an alarm for 7:30", language="en")
    assert done.reply == "Alarm set for 7:30." and not done.error
    await c.close()


def test_a_store_moved_aside_shows_at_start_and_in_doctor(state: Path, tmp_path: Path) -> None:
    (state / "alarms.db").write_bytes(GARBAGE)
    config = tmp_path / "config.toml"
    config.write_text("[mqtt]\nenabled = false\n[dbus]\nenabled = false\n")
    env = {**os.environ, "XDG_STATE_HOME": str(state.parent)}
    ask = subprocess.run([sys.executable, "-m", "hearthd", "--config", str(config), "ask", "what alarms do I have"],
                         capture_output=True, text=True, timeout=120, env=env)
    copy = kept(state / "alarms.db")
    assert ask.returncode == 0 and "is corrupt" in ask.stderr and str(copy) in ask.stderr
    doctor = subprocess.run([sys.executable, "-m", "hearthd", "--config", str(config), "doctor"],
                            capture_output=True, text=True, timeout=120, env=env)
    line = next(x for x in doctor.stdout.splitlines() if "alarms.db:" in x)
    assert "warn" in line and "was corrupt" in line and str(copy) in line, doctor.stdout
    assert f"rm {copy}" in doctor.stdout


# -- issue 26, item 6: what stands where state should be ----------------------------------------------------------


def _state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    (tmp_path / "state").mkdir()
    return tmp_path / "state" / "hearthd"


def test_an_audit_trail_that_is_a_link_to_a_file_elsewhere_is_never_written_through(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hearthd.config import Config
    from hearthd.daemon.audit import AuditLog
    from hearthd.doctor import check_state

    where = _state_home(tmp_path, monkeypatch)
    where.mkdir(mode=0o700)
    elsewhere = tmp_path / "someone-elses.txt"
    elsewhere.write_text("theirs\n")
    elsewhere.chmod(0o644)
    (where / "audit.jsonl").symlink_to(elsewhere)
    log = AuditLog(where / "audit.jsonl")
    assert not log.write(log.turn("unlock the front door", "en", []))  # refused, and counted: not lost silently
    assert log.lost == 1 and "symbolic link" in log.last_loss
    assert elsewhere.read_text() == "theirs\n" and elsewhere.stat().st_mode & 0o777 == 0o644  # untouched
    findings = [f for f in check_state(Config()) if not f.ok]
    assert any("symbolic link" in f.detail for f in findings), findings


@pytest.mark.parametrize("kind", ["file", "dangling", "loop"])
def test_a_state_directory_that_is_no_directory_is_said_plainly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                kind: str) -> None:
    from hearthd.config import Config
    from hearthd.doctor import check_state
    from hearthd.private import StateWriteError, private_dir

    where = _state_home(tmp_path, monkeypatch)
    if kind == "file":
        where.write_text("not a directory")
    elif kind == "dangling":
        where.symlink_to(tmp_path / "gone")
    else:
        where.symlink_to(where)
    with pytest.raises(StateWriteError) as e:  # what every store opens first: a clear error, not "[Errno 17]"
        private_dir(where)
    assert str(where) in e.value.message and "Errno" not in e.value.message
    findings = [f for f in check_state(Config()) if not f.ok]
    assert findings and all(f.name == "state directory" for f in findings), findings  # doctor no longer says "ok"


def test_history_says_which_file_it_cannot_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    where = _state_home(tmp_path, monkeypatch)
    where.mkdir(mode=0o700)
    (where / "audit.jsonl").mkdir()  # unreadable as a file (as root, a chmod 000 file would still be read)
    proc = subprocess.run([sys.executable, "-m", "hearthd", "history"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"),
                               "XDG_CONFIG_HOME": str(tmp_path / "cfg")})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "cannot read" in proc.stderr and "audit.jsonl" in proc.stderr and "no history yet" not in proc.stdout


def test_an_audit_trail_with_no_directory_possible_counts_the_turn_as_not_recorded(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    log = AuditLog(blocker / "audit.jsonl")
    assert not log.write(log.turn("what time is it", "en", []))  # no exception out of the turn
    assert log.lost == 1 and "not a directory" in log.last_loss
