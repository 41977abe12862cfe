"""The audit trail: one JSON line per turn (or only a hash of the words in privacy mode), rotated by size, and
`hearthd history` printing it."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

from hearthd.daemon.audit import AuditLog
from hearthd.daemon.components import Components
from hearthd.daemon.pipeline import Pipeline
from hearthd.events import Trace


def components_with_log(base_config, path: Path, privacy: bool = False) -> Components:  # type: ignore[no-untyped-def]
    cfg = dataclasses.replace(base_config, general=dataclasses.replace(base_config.general, privacy=privacy))
    c = Components(cfg)
    c.audit = AuditLog(path, privacy=privacy)
    return c


def test_a_confirmed_turn_is_recorded_with_its_decision_answer_and_result(base_config, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                          monkeypatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))  # its own alarm store
    c = components_with_log(base_config, tmp_path / "audit.jsonl")
    c.alarms.add("06:00")
    for text in ("cancel all my alarms", "yes"):
        asyncio.run(Pipeline(c, Trace()).run_text(text))
    first, second = AuditLog(tmp_path / "audit.jsonl").tail(10)
    assert first["utterance"] == "cancel all my alarms" and first["policy"] == "asked"
    assert first["proposed"] == [{"name": "cancel_all_alarms", "arguments": {}}] and first["results"] == []
    assert second["policy"] == "confirmed" and second["answer"] == "yes"
    assert second["results"] == [{"name": "cancel_all_alarms", "ok": True}]
    assert "agent" in first["timings"] and first["reply"].startswith("Cancel all your alarms?")


def test_privacy_mode_keeps_only_a_hash(base_config, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    c = components_with_log(base_config, tmp_path / "audit.jsonl", privacy=True)
    asyncio.run(Pipeline(c, Trace()).run_text("set an alarm for 6 am"))
    (row,) = AuditLog(tmp_path / "audit.jsonl").tail(5)
    assert "utterance" not in row and len(row["utterance_sha256"]) == 64 and row["reply"] == ""
    assert "6 am" not in (tmp_path / "audit.jsonl").read_text()


def test_a_turn_with_text_no_utf8_can_hold_is_still_recorded(tmp_path: Path) -> None:
    """A lone surrogate that came in from outside (issue 26): the record is written, readable JSON, nothing lost."""
    for privacy in (False, True):
        log = AuditLog(tmp_path / f"audit-{privacy}.jsonl", privacy=privacy)
        entry = log.turn("\ud800" + "x" * 2100, "en", [])
        entry["reply"] = "ok \udfff"
        assert log.write(entry) and log.lost_total == 0
        (row,) = AuditLog(tmp_path / f"audit-{privacy}.jsonl").tail(5)
        assert row["reply"] == "ok \udfff"
        assert row.get("utterance", "\ud800" + "x" * 2100) == "\ud800" + "x" * 2100
        assert ("utterance_sha256" in row) == privacy


def test_rotation_keeps_the_newest_lines_readable(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl", max_bytes=400, keep=2)
    for i in range(40):
        log.write({"i": i, "pad": "x" * 50})
    assert (tmp_path / "audit.jsonl.1").exists() and not (tmp_path / "audit.jsonl.3").exists()
    assert [r["i"] for r in log.tail(3)] == [37, 38, 39]
    with open(tmp_path / "audit.jsonl", "a") as f:
        f.write('{"torn": ')  # a crash mid-line: skipped, not fatal
    assert [r["i"] for r in log.tail(2)] == [38, 39]


def test_hearthd_history_prints_the_last_turns(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path)}
    run = [sys.executable, "-m", "hearthd"]
    subprocess.run([*run, "ask", "cancel all my alarms", "--then", "no"], env=env, capture_output=True, timeout=120,
                   check=True)
    out = subprocess.run([*run, "history", "-n", "5"], env=env, capture_output=True, text=True, timeout=60)
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 2 and "'cancel all my alarms'" in lines[0] and "policy=asked" in lines[0]
    assert "policy=declined" in lines[1] and "answer=no" in lines[1]
    rows = [json.loads(x) for x in subprocess.run([*run, "history", "--json"], env=env, capture_output=True,
                                                  text=True, timeout=60).stdout.splitlines()]
    assert [r["policy"] for r in rows] == ["asked", "declined"]
