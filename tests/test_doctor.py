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


def test_doctor_lists_the_dbus_services_it_found(tmp_path: Path) -> None:
    """Players and notifications on the session bus, logind and UPower on the system bus; NetworkManager absent."""
    import asyncio

    from .dbus_mocks import MockLogin1, MockNotifications, MockPlayer, MockUPower, start_all, stop_all

    with session_bus() as session, session_bus() as system:
        if session is None or system is None:
            pytest.skip("dbus-daemon is not installed")

        async def scenario() -> subprocess.CompletedProcess[str]:
            on_session = [MockPlayer("vlc"), MockNotifications()]
            on_system = [MockLogin1(), MockUPower()]
            await start_all(session, *on_session)
            await start_all(system, *on_system)
            try:
                return await asyncio.to_thread(doctor, tmp_path, "", {"DBUS_SESSION_BUS_ADDRESS": session,
                                                                      "DBUS_SYSTEM_BUS_ADDRESS": system})
            finally:
                await stop_all(*on_session, *on_system)

        proc = asyncio.run(scenario())
    out = proc.stdout
    assert "Traceback" not in out + proc.stderr
    (players,) = [line for line in out.splitlines() if "media players (MPRIS):" in line]
    assert players.split() == ["ok", "media", "players", "(MPRIS):", "vlc"]
    assert "org.freedesktop.Notifications on the session bus" in out
    assert "org.freedesktop.login1 on the system bus" in out
    assert "org.freedesktop.UPower on the system bus" in out
    assert "org.freedesktop.NetworkManager not found" in out and "Wi-Fi on/off" in out


def test_a_truncated_model_file_is_reported_as_such(tmp_path: Path) -> None:
    """A download cut short keeps its GGUF header but not its weights: doctor says it cannot be loaded and why."""
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\x00" * 1_000_000)
    proc = doctor(tmp_path, f'[mqtt]\nenabled = false\n[agent]\nmodel_path = "{model}"\n', {})
    assert proc.returncode == 1 and "Traceback" not in proc.stdout + proc.stderr
    (line,) = [x for x in proc.stdout.splitlines() if "agent model:" in x]
    assert line.split()[0] == "MISS" and "cannot be loaded" in line and "truncated, corrupt" in line
    assert "1.0 MB" in line and str(model) in line
