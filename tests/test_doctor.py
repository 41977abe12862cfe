import os
import subprocess
import sys
from pathlib import Path

import pytest

from .services import free_port, mosquitto, session_bus


def doctor(tmp_path: Path, config: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    cfg = tmp_path / "config.toml"
    cfg.write_text(config)
    clean = {k: v for k, v in os.environ.items() if not k.startswith("DBUS_")}
    clean.update(env)
    return subprocess.run([sys.executable, "-m", "hearthd", "--config", str(cfg), "doctor"],
                          capture_output=True, text=True, env=clean, timeout=60)


def test_reports_each_missing_part_with_a_fix(tmp_path: Path) -> None:
    port = free_port()  # nothing listens there
    proc = doctor(tmp_path, f"[mqtt]\nport = {port}\n", {"DBUS_SYSTEM_BUS_ADDRESS": f"unix:path={tmp_path}/none"})
    out = proc.stdout
    assert "Traceback" not in out + proc.stderr
    assert f"nothing listening at 127.0.0.1:{port}" in out and "mosquitto" in out
    assert "session bus: no address" in out
    assert "system bus: not reachable" in out
    assert "no input device found" in out or "PortAudio" in out
    assert "okay_nabu" in out
    assert proc.returncode == 0  # none of those is required to run on files


def test_missing_model_is_required_and_names_the_config_key(tmp_path: Path) -> None:
    proc = doctor(tmp_path, '[agent]\nmodel_path = "/nonexistent/model.gguf"\n', {})
    assert proc.returncode == 1
    assert "MISS" in proc.stdout and "agent.model_path" in proc.stdout


def test_finds_a_running_broker_and_session_bus(tmp_path: Path) -> None:
    with mosquitto(tmp_path) as port, session_bus() as bus:
        if port is None or bus is None:
            pytest.skip("mosquitto or dbus-daemon is not installed")
        proc = doctor(tmp_path, f"[mqtt]\nport = {port}\n", {"DBUS_SESSION_BUS_ADDRESS": bus})
    assert f"reachable at 127.0.0.1:{port}" in proc.stdout
    assert f"session bus: reachable at {bus}" in proc.stdout
