"""hearthd as a systemd service: sd_notify (READY, STATUS, WATCHDOG, RELOADING, STOPPING) from the real daemon,
SIGHUP reloads, the unit files, and `hearthd service install`. No models load: `run --headless` needs none."""

from __future__ import annotations

import json
import logging
import os
import queue
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hearthd.config import load_config
from hearthd.daemon.notify import SdNotify, watchdog_interval
from hearthd.daemon.unit import hearthd_command, install, render
from hearthd.events import ReplyEvent, ToolCallEvent, TranscriptEvent

HD = [sys.executable, "-m", "hearthd"]


class Daemon:
    """`hearthd run --headless --json` with a notify socket: what it sends systemd and what it prints."""

    def __init__(self, tmp: Path, config: Path, args: tuple[str, ...] = ("run", "--headless", "--json"),
                 env: dict[str, str] | None = None) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(tmp / "notify.sock"))
        self.sock.settimeout(0.2)
        self.notes: queue.Queue[dict[str, str]] = queue.Queue()
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self._open = True
        env = {**os.environ, "NOTIFY_SOCKET": str(tmp / "notify.sock"), "WATCHDOG_USEC": "400000",
               "XDG_CONFIG_HOME": str(tmp / "config"), "XDG_STATE_HOME": str(tmp / "state"),
               "HEARTHD__MQTT__ENABLED": "false", "HEARTHD__DBUS__ENABLED": "false", **(env or {})}
        self.proc = subprocess.Popen([*HD, "--config", str(config), *args], env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        threading.Thread(target=self._notifications, daemon=True).start()
        threading.Thread(target=self._trace, daemon=True).start()

    def _notifications(self) -> None:
        while self._open:
            try:
                data = self.sock.recv(4096).decode()
            except TimeoutError:
                continue
            except OSError:
                return
            self.notes.put(dict(line.split("=", 1) for line in data.splitlines()))

    def _trace(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("{"):
                self.events.put(json.loads(line))

    @staticmethod
    def _next(q: queue.Queue[Any], match: Callable[[Any], bool], timeout: float, what: str) -> Any:
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                item = q.get(timeout=left)
            except queue.Empty:
                break
            if match(item):
                return item
        raise AssertionError(f"no {what} within {timeout} s")

    def note(self, key: str, timeout: float = 10.0) -> dict[str, str]:
        """The next notification carrying `key` (WATCHDOG pings in between are skipped unless asked for)."""
        return self._next(self.notes, lambda n: key in n, timeout, key)  # type: ignore[no-any-return]

    def event(self, kind: str, timeout: float = 10.0) -> dict[str, Any]:
        return self._next(self.events, lambda e: e["type"] == kind, timeout, f"{kind} event")  # type: ignore[no-any-return]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self._open = False
        self.sock.close()


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "hearthd.toml"
    path.write_text('[general]\nlanguage = "en"\n')
    return path


@pytest.fixture
def daemon(tmp_path: Path, config: Path) -> Iterator[Daemon]:
    d = Daemon(tmp_path, config)
    try:
        yield d
    finally:
        d.close()


def test_ready_with_a_status_then_the_watchdog_keeps_pinging(daemon: Daemon) -> None:
    ready = daemon.note("READY")
    assert ready["READY"] == "1" and ready["STATUS"].startswith("idle, 0 alarms")
    assert daemon.event("ready")["pending"] == 0  # the trace is unchanged
    started = time.monotonic()
    daemon.note("WATCHDOG", timeout=1.5)
    daemon.note("WATCHDOG", timeout=1.5 - (time.monotonic() - started))  # every 0.2 s: half of WATCHDOG_USEC


def test_sighup_reloads_the_config_and_a_broken_one_is_rejected(daemon: Daemon, config: Path) -> None:
    daemon.note("READY")
    config.write_text('[general]\nlanguage = "ru"\n[alarms]\nrepeat_s = 5\n[stt]\nbeam_size = 3\n')
    daemon.proc.send_signal(signal.SIGHUP)
    reloading = daemon.note("RELOADING")
    assert int(reloading["MONOTONIC_USEC"]) > 0
    assert daemon.note("READY")["READY"] == "1"
    event = daemon.event("reload")
    assert event["language"] == "ru" and event["changed"] == ["general.language", "alarms.repeat_s"]
    assert event["restart"] == ["stt.beam_size"]  # reported, not applied: the loaded model stays

    config.write_text('[general]\nlanguage = 5\n')
    daemon.proc.send_signal(signal.SIGHUP)
    daemon.note("RELOADING")
    assert "rejected" in daemon.note("READY")["STATUS"]
    error = daemon.event("error")
    assert error["code"] == "config-invalid" and "general.language" in error["message"]
    daemon.note("WATCHDOG")  # still alive and well
    assert daemon.proc.poll() is None

    config.write_text('[general]\nlanguage = "hi"\n')  # fixed: the next reload goes through from "ru"
    daemon.proc.send_signal(signal.SIGHUP)
    assert daemon.event("reload")["changed"] == ["general.language", "alarms.repeat_s"]


def test_sigterm_says_stopping_and_exits_cleanly(daemon: Daemon) -> None:
    daemon.note("READY")
    daemon.proc.send_signal(signal.SIGTERM)
    assert daemon.note("STOPPING")["STOPPING"] == "1"
    assert daemon.proc.wait(10) == 0
    assert daemon.proc.stderr is not None and "SIGTERM" in daemon.proc.stderr.read()  # the log says why


def test_sd_notify_speaks_to_abstract_sockets_and_fails_quietly(caplog: pytest.LogCaptureFixture) -> None:
    name = f"hearthd-test-{os.getpid()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(b"\0" + name.encode())
        notify = SdNotify("@" + name)
        assert notify.ready("idle,\nfine") and notify.watchdog()
        assert sock.recv(100) == b"READY=1\nSTATUS=idle, fine"  # a newline would start a new variable
        assert sock.recv(100) == b"WATCHDOG=1"
    assert not SdNotify("").enabled and not SdNotify("").ready()
    gone = SdNotify("/nonexistent/notify.sock")
    with caplog.at_level(logging.WARNING):
        assert not gone.watchdog() and not gone.watchdog()
    assert len(caplog.records) == 1  # once, not every interval


def test_the_watchdog_interval_is_half_of_watchdog_usec_and_only_for_this_process() -> None:
    assert watchdog_interval({"WATCHDOG_USEC": "30000000"}) == 15.0
    assert watchdog_interval({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": str(os.getpid())}) == 15.0
    assert watchdog_interval({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"}) is None
    assert watchdog_interval({}) is None and watchdog_interval({"WATCHDOG_USEC": "x"}) is None


def test_a_reload_retunes_the_parts_built_from_the_config(tmp_path: Path) -> None:
    from hearthd.daemon.components import Components
    from hearthd.daemon.reload import apply_config

    (tmp_path / "a.toml").write_text("")
    (tmp_path / "b.toml").write_text('[policy]\nconfirm = ["set_alarm"]\nconfirm_timeout_s = 5\n'
                                     '[general]\nprivacy = true\n[alarms]\nsnooze_minutes = 5\n'
                                     '[stt]\nmodel = "whisper-small"\n')
    c = Components(load_config(tmp_path / "a.toml", environ={"HEARTHD__MQTT__ENABLED": "false"}))
    sections = c.cfg.general, c.cfg.policy
    done = apply_config(c, load_config(tmp_path / "b.toml", environ={"HEARTHD__MQTT__ENABLED": "false"}))
    assert done.restart == ["stt.model"] and c.cfg.stt.model == "whisper-base"
    assert (c.cfg.general, c.cfg.policy) == sections and c.cfg.general is sections[0]  # in place
    assert c.policy.extra == {"set_alarm"} and c.policy.timeout == 5.0 and c.alarms.snooze_minutes == 5
    assert c.audit is not None and c.audit.privacy


def test_privacy_keeps_the_words_out_of_the_log(caplog: pytest.LogCaptureFixture) -> None:
    from hearthd.config import GeneralConfig
    from hearthd.daemon.logs import log_events

    general = GeneralConfig(privacy=True)
    on_event = log_events(general)
    with caplog.at_level(logging.DEBUG, logger="hearthd.events"):
        on_event(TranscriptEvent(text="unlock the front door", lang="en", prob=1.0))
        on_event(ToolCallEvent(name="announce", arguments={"text": "front door"}, source="model", confidence=1.0,
                               relevance=None))
        general.privacy = False  # what a reload does
        on_event(ReplyEvent(text="Done.", lang="en"))
    assert "front door" not in caplog.text and "Done." in caplog.text


def _verify(unit: Path, user: bool, runtime: Path) -> None:
    cmd = ["systemd-analyze", *(["--user"] if user else []), "verify", str(unit)]
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
    # verify exits 0 even for lines it ignores: any word about our file is a failure
    about = [ln for ln in (done.stdout + done.stderr).splitlines() if str(unit) in ln or "hearthd" in ln]
    assert done.returncode == 0 and not about, done.stdout + done.stderr


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_both_units_pass_systemd_analyze_verify(tmp_path: Path) -> None:
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    for scope in ("user", "system"):
        unit = tmp_path / scope / "hearthd.service"
        unit.parent.mkdir()
        unit.write_text(render(scope, [sys.executable, "-m", "hearthd"]))  # verify wants ExecStart to exist
        _verify(unit, scope == "user", runtime)


def test_service_install_writes_a_unit_that_runs_this_hearthd(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    done = subprocess.run([*HD, "service", "install", "--user", "--dir", str(tmp_path), "--no-enable"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "systemctl --user enable --now" in done.stdout  # what to run, since it did not
    unit = (tmp_path / "hearthd.service").read_text()
    (exec_start,) = [ln.removeprefix("ExecStart=") for ln in unit.splitlines() if ln.startswith("ExecStart=")]
    command = shlex.split(exec_start)
    assert command[-1] == "run" and "Type=notify" in unit and "WatchdogSec=30" in unit
    python = command[0] if command[1:3] == ["-m", "hearthd"] else Path(command[0]).read_text().split()[0][2:]
    assert python == sys.executable
    version = subprocess.run([*command[:-1], "--version"], capture_output=True, text=True, timeout=60)
    assert version.stdout.startswith("hearthd ")


def test_service_install_enables_it_through_systemctl(tmp_path: Path) -> None:
    ran: list[list[str]] = []

    def run(cmd: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        ran.append(cmd)
        return subprocess.CompletedProcess(cmd, 0, "", "")

    said: list[str] = []
    which = {"systemctl": "/usr/bin/systemctl"}.get
    assert install("user", tmp_path, run=run, which=which, out=said.append) == 0
    assert ran == [["systemctl", "--user", "daemon-reload"],
                   ["systemctl", "--user", "enable", "--now", str(tmp_path / "hearthd.service")]]
    assert install("user", tmp_path / "x", run=run, which=lambda _: None, out=said.append) == 0  # no systemctl
    assert len(ran) == 2 and "systemctl --user daemon-reload" in said[-1]


def test_exec_start_is_quoted_for_systemd() -> None:
    unit = render("user", ["/opt/my apps/bin/python", "-m", "hearthd"], ["--headless"])
    assert 'ExecStart="/opt/my apps/bin/python" -m hearthd run --headless' in unit
    assert "100%%" in render("system", ["/srv/100%/hearthd"])
    assert hearthd_command("/nowhere/python", which=lambda _: None) == [sys.executable, "-m", "hearthd"]


def test_the_live_daemon_on_a_jack_dummy_device(tmp_path: Path, config: Path) -> None:
    """`hearthd run` with PortAudio on a dummy JACK server (no sound card): it opens the microphone, reports
    READY, listens for the wake word without losing a frame, and stops cleanly."""
    import shutil

    jackd = shutil.which("jackd")
    if jackd is None:
        pytest.skip("jackd is not installed (apt-get install jackd2)")
    server = f"hearthd-test-{os.getpid()}"
    jack_env = {**os.environ, "JACK_DEFAULT_SERVER": server, "JACK_NO_START_SERVER": "1"}
    jack = subprocess.Popen([jackd, "-n", server, "--no-realtime", "-d", "dummy", "-r", "16000", "-p", "512"],
                            env=jack_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        probe = ("import sounddevice as sd, time\n"
                 "for _ in range(50):\n"
                 "    jack = [h for h in sd.query_hostapis() if 'JACK' in h['name'] and h['devices']]\n"
                 "    if jack: print(jack[0]['devices'][0]); break\n"
                 "    sd._terminate(); time.sleep(0.1); sd._initialize()\n")
        found = subprocess.run([sys.executable, "-c", probe], env=jack_env, capture_output=True, text=True,
                               timeout=30).stdout.strip()
        if not found:
            pytest.skip("PortAudio here lists no JACK device")
        device = f'"{found}"'  # a TOML string: the device by its PortAudio index
        d = Daemon(tmp_path, config, args=("run", "--json"),
                   env={"JACK_DEFAULT_SERVER": server, "JACK_NO_START_SERVER": "1",
                        "HEARTHD__AUDIO__INPUT_DEVICE": device, "HEARTHD__AUDIO__OUTPUT_DEVICE": device})
        try:
            assert d.event("listening", timeout=60)["state"] == "idle"
            assert d.note("READY")["READY"] == "1"
            time.sleep(2.0)  # idling: reading the microphone, looking for the wake word
            assert d.proc.poll() is None
            d.proc.send_signal(signal.SIGTERM)
            assert d.note("STOPPING")["STOPPING"] == "1"
            metrics = d.event("metrics", timeout=20)
            assert metrics["blocks"] > 30 and metrics["frames_dropped"] == 0
            assert d.proc.wait(20) == 0
        finally:
            d.close()
    finally:
        jack.terminate()
        jack.wait(10)
