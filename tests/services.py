"""Real services for tests, on 127.0.0.1 / private sockets only, stopped by PID."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return True
        except OSError:
            time.sleep(0.05)
    return False


@contextmanager
def mosquitto(tmp: Path) -> Iterator[int | None]:
    """A broker on 127.0.0.1: the one .ci/run started, else our own; None when mosquitto is not installed."""
    if os.environ.get("HEARTHD_TEST_MQTT_PORT"):
        yield int(os.environ["HEARTHD_TEST_MQTT_PORT"])
        return
    binary = shutil.which("mosquitto") or ("/usr/sbin/mosquitto" if os.path.exists("/usr/sbin/mosquitto") else None)
    if not binary:
        yield None
        return
    port = free_port()
    conf = tmp / "mosquitto.conf"
    conf.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
    proc = subprocess.Popen([binary, "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield port if wait_port(port) else None
    finally:
        proc.terminate()
        proc.wait(timeout=5)


@contextmanager
def session_bus() -> Iterator[str | None]:
    """A private dbus-daemon; yields its address (None when dbus-daemon is not installed)."""
    binary = shutil.which("dbus-daemon")
    if not binary:
        yield None
        return
    out = subprocess.run([binary, "--session", "--fork", "--print-address=1", "--print-pid=1"],
                         capture_output=True, text=True, check=True).stdout.split()
    address, pid = out[0], int(out[1])
    try:
        yield address
    finally:
        os.kill(pid, 15)


@contextmanager
def pulseaudio(tmp: Path) -> Iterator[str | None]:
    """A PulseAudio server with one null sink on a private socket; yields its PULSE_SERVER (None when
    pulseaudio is not installed). No sound card needed: the sink plays into nothing."""
    binary = shutil.which("pulseaudio")
    if not binary or not shutil.which("pactl"):
        yield None
        return
    runtime = tmp / "pulse"
    runtime.mkdir(parents=True, exist_ok=True)
    socket_path = runtime / "native"
    env = {**os.environ, "HOME": str(runtime), "XDG_RUNTIME_DIR": str(runtime), "XDG_CONFIG_HOME": str(runtime)}
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)  # the server must not register on anyone's session bus
    proc = subprocess.Popen(
        [binary, "-n", "--daemonize=no", "--exit-idle-time=-1", "--disallow-exit", "--use-pid-file=no",
         "--disable-shm", "-L", f"module-native-protocol-unix socket={socket_path} auth-anonymous=1",
         "-L", "module-null-sink sink_name=hearthd_test"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server = f"unix:{socket_path}"
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and proc.poll() is None:
            probe = subprocess.run(["pactl", "--server", server, "info"], capture_output=True, env=env)
            if probe.returncode == 0:
                break
            time.sleep(0.1)
        yield server if proc.poll() is None else None
    finally:
        proc.terminate()
        proc.wait(timeout=5)


class Broker:
    """A mosquitto of the test's own on 127.0.0.1 that can be stopped and started again on the same port."""

    def __init__(self, tmp: Path) -> None:
        self.binary = shutil.which("mosquitto") or ("/usr/sbin/mosquitto" if os.path.exists("/usr/sbin/mosquitto")
                                                    else None)
        self.port = free_port()
        self.conf = tmp / "mosquitto.conf"
        self.conf.write_text(f"listener {self.port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        assert self.binary is not None
        self.proc = subprocess.Popen([self.binary, "-c", str(self.conf)], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        if not wait_port(self.port):
            raise RuntimeError(f"mosquitto did not start on {self.port}")

    def stop(self, kill: bool = False) -> None:
        """Stop the broker: a clean shutdown (as a restarting broker does), or with `kill` at once (a test's end:
        nothing is listening to it any more, and mosquitto's clean exit costs ~0.1 s a test)."""
        if self.proc is not None:
            if kill:
                self.proc.kill()
            else:
                self.proc.terminate()
            self.proc.wait(timeout=5)
            self.proc = None


CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
UNREACHABLE = ("No matching distribution", "NewConnectionError", "Temporary failure in name resolution",
               "Network is unreachable", "Max retries exceeded", "Could not fetch URL", "ConnectTimeout")


class RegistryUnreachable(RuntimeError):
    """The package registry could not be reached to make a virtual environment (the caller skips)."""


def _has(python: Path, package: str, version: str) -> bool:
    if not python.exists():
        return False
    probe = subprocess.run([str(python), "-c", "import importlib.metadata as m; "
                            f"assert m.version({package!r}) == {version!r}"], capture_output=True, timeout=60)
    return probe.returncode == 0


def venv_with(package: str, version: str, where: Path) -> Path:
    """The python of a virtual environment at `where` with `package==version` from the package registry, made once
    (kept in the cache: later runs reuse it). Made aside, then moved into place whole, so an interrupted install
    never looks like a finished one. RegistryUnreachable when the registry cannot be reached."""
    python = where / "bin" / "python"
    if _has(python, package, version):
        return python
    where.parent.mkdir(parents=True, exist_ok=True)
    building = where.with_name(f"{where.name}.{os.getpid()}")
    shutil.rmtree(building, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(building)], check=True, timeout=120)
    install = subprocess.run([str(building / "bin" / "python"), "-m", "pip", "install", "--quiet",
                              f"{package}=={version}"], capture_output=True, text=True, timeout=600)
    if install.returncode != 0:
        shutil.rmtree(building, ignore_errors=True)
        said = install.stdout + install.stderr
        if any(word in said for word in UNREACHABLE):
            raise RegistryUnreachable(f"cannot install {package}=={version}: {said[-300:]}")
        raise RuntimeError(f"pip install {package}=={version} failed: {said[-2000:]}")
    shutil.rmtree(where, ignore_errors=True)
    try:
        building.rename(where)
    except OSError:  # another run put one there meanwhile
        shutil.rmtree(building, ignore_errors=True)
    # a venv's scripts name their own path: the moved one is used through `python -m`, which does not care
    if not _has(python, package, version):
        raise RuntimeError(f"{where} has no working {package} {version}")
    return python
