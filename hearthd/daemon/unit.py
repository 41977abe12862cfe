"""`hearthd service install`: the systemd unit rendered for this installation, written, and enabled.

The templates are systemd/hearthd.service (user) and systemd/hearthd-system.service (system); only ExecStart's
program changes, to the hearthd that is running now, so a unit written from a virtual environment runs that
environment's hearthd.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Literal

from ..config import xdg_dir

Scope = Literal["user", "system"]
UNIT = "hearthd.service"
TEMPLATES: dict[Scope, str] = {"user": "hearthd.service", "system": "hearthd-system.service"}
SYSTEM_USER = "hearthd"
_EXEC_START = re.compile(r"^ExecStart=(\S+)(.*)$", re.MULTILINE)


def template(scope: Scope) -> str:
    """The unit file as shipped."""
    name = TEMPLATES[scope]
    try:
        return resources.files("hearthd.systemd").joinpath(name).read_text(encoding="utf-8")
    except ModuleNotFoundError:  # an editable install made before systemd/ became package data: the checkout's
        return (Path(__file__).resolve().parents[2] / "systemd" / name).read_text(encoding="utf-8")


def _shebang_python(script: Path) -> str:
    try:
        with script.open("rb") as f:
            first = f.readline(4096).decode("utf-8", "replace")
    except OSError:
        return ""
    return first[2:].strip().split(" ")[0] if first.startswith("#!") else ""


def _same_path(a: str, b: str) -> bool:
    # no symlink resolution: a virtual environment's python is a link to the system's, yet another installation
    return os.path.normpath(os.path.abspath(a)) == os.path.normpath(os.path.abspath(b))


def hearthd_command(argv0: str | None = None, which: Callable[[str], str | None] = shutil.which) -> list[str]:
    """How to run this installation: the hearthd script being run, else the one on PATH that runs this Python,
    else `<this python> -m hearthd`."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    if Path(argv0).name == "hearthd" and os.access(argv0, os.X_OK):
        return [str(Path(argv0).resolve())]
    found = which("hearthd")
    if found and _same_path(_shebang_python(Path(found)), sys.executable):
        return [str(Path(found).resolve())]
    return [sys.executable, "-m", "hearthd"]


def quote(arg: str) -> str:
    """One ExecStart argument: specifiers and variables escaped, quoted when it holds spaces or quotes."""
    arg = arg.replace("%", "%%").replace("$", "$$")
    if re.search(r"[\s\"'\\;]", arg):
        return '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return arg


def render(scope: Scope, command: list[str], extra_args: list[str] | None = None) -> str:
    """The unit with ExecStart running `command` (plus `extra_args` after the template's own arguments)."""
    text = template(scope)
    program = " ".join(quote(a) for a in command)
    more = "".join(" " + quote(a) for a in extra_args or [])
    text, n = _EXEC_START.subn(lambda m: f"ExecStart={program}{m.group(2)}{more}", text, count=1)
    if n != 1:
        raise ValueError(f"{TEMPLATES[scope]} has no ExecStart= line")
    return f"# Written by `hearthd service install` from {TEMPLATES[scope]}.\n{text}"


def unit_dir(scope: Scope) -> Path:
    """Where systemd looks for units the user or the administrator installed."""
    if scope == "user":
        return xdg_dir("XDG_CONFIG_HOME", ".config") / "systemd" / "user"
    return Path("/etc/systemd/system")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.chmod(0o644)
    tmp.replace(path)  # atomic: systemd never reads half a unit


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def install(scope: Scope = "user", directory: str | Path | None = None, enable: bool = True,
            headless: bool = False, run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run,
            which: Callable[[str], str | None] = shutil.which, out: Callable[[str], None] = print) -> int:
    """Write the unit; then `systemctl daemon-reload` and `enable --now` unless `enable` is off or there is no
    systemctl (then say what to run). Returns the exit status."""
    target = (Path(directory).absolute() if directory else unit_dir(scope)) / UNIT
    command = hearthd_command(which=which)
    try:
        _write(target, render(scope, command, ["--headless"] if headless else None))
    except OSError as e:
        root = scope == "system" and isinstance(e, PermissionError)
        hint = " (the system unit needs root: sudo hearthd service install --system)" if root else ""
        out(f"hearthd: cannot write {target}: {e.strerror or e}{hint}")
        return 1
    out(f"wrote {target} (ExecStart: {' '.join(command)} run{' --headless' if headless else ''})")
    systemctl = ["systemctl"] + (["--user"] if scope == "user" else [])
    name = UNIT if directory is None or target.parent == unit_dir(scope) else str(target)
    steps = [[*systemctl, "daemon-reload"], [*systemctl, "enable", "--now", name]]
    todo = "\n".join("  " + " ".join(s) for s in steps)
    if scope == "system" and not _user_exists(SYSTEM_USER):
        out(f"the user {SYSTEM_USER} does not exist yet; create it first:\n"
            f"  useradd --system --gid audio --home-dir /var/lib/hearthd --shell /usr/sbin/nologin {SYSTEM_USER}")
        enable = False
    if not enable or which("systemctl") is None:
        out(f"to start it now and at every {'login' if scope == 'user' else 'boot'}:\n{todo}")
        return 0
    for step in steps:
        done = run(step, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            out(f"hearthd: {' '.join(step)} failed: {(done.stderr or done.stdout).strip()}\n"
                f"the unit is written; once that is fixed, run:\n{todo}")
            return 1
    out(f"enabled and started: {' '.join(systemctl)} status hearthd")
    return 0
