"""`hearthd doctor`: what is present, what is missing, and how to fix it (never a traceback)."""

from __future__ import annotations

import os
import shutil
import socket
from dataclasses import dataclass
from typing import Any

from .assets import AssetError, AssetStore
from .config import Config


@dataclass
class Finding:
    """One checked part: ok or not, what was found, how to fix it."""

    area: str
    name: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = True


def _model_findings(store: AssetStore, wanted: list[tuple[str, str, str]]) -> list[Finding]:
    """Whether each (role, catalogue name, explicit path) model is in place."""
    out = []
    for role, name, path in wanted:
        if path and not name and role.startswith("tts"):
            found = os.path.isfile(os.path.expanduser(path))
            out.append(Finding("models", f"{role}: {path}", found, "given by path" if found else "file missing",
                               "" if found else f"fix tts.voices.{role[4:]}"))
            continue
        try:
            status = store.status(name or "", explicit_path=path or None)
            ok = status.source != "missing"
            out.append(Finding("models", f"{role}: {name or path}", ok, f"{status.source}: {status.detail}",
                               "" if ok else status.detail))
        except AssetError as e:
            out.append(Finding("models", f"{role}: {name or path}", False, e.message, e.message))
    return out


def check_stages(cfg: Config, store: AssetStore | None, remote: bool | None = None) -> list[Finding]:
    """Each stage's engine checked by its own check (hearthd.engines): the local ones' models and voices, a remote
    one's service; `remote` keeps only the remote (True) or the local (False) stages."""
    from .engines import STAGES, selected

    memo: dict[str, Any] = {}  # one describe per uri: one service often serves several stages
    out = []
    for stage in STAGES:
        engine = selected(cfg, stage)
        if remote is None or engine.remote == remote:
            out += engine.check(cfg, store, memo)
    return out


def local_stt_findings(cfg: Config, store: AssetStore | None, memo: dict[str, Any]) -> list[Finding]:
    """faster-whisper here: its model is in place."""
    return _model_findings(store, [("stt", cfg.stt.model, cfg.stt.model_path)]) if store is not None else []


def local_agent_findings(cfg: Config, store: AssetStore | None, memo: dict[str, Any]) -> list[Finding]:
    """The model run here: in place, and what it is."""
    if store is None:
        return []
    return _model_findings(store, [("agent", cfg.agent.model, cfg.agent.model_path)]) + [check_agent_model(cfg, store)]


def server_agent_findings(cfg: Config, store: AssetStore | None, memo: dict[str, Any]) -> list[Finding]:
    """The agent on an inference server: the GGUF whose vocabulary and chat template are read here is in place, and
    the server answers with a model of that vocabulary."""
    if store is None:
        return []
    out = _model_findings(store, [("agent", cfg.agent.model, cfg.agent.model_path)])
    if not out[-1].ok:
        return out
    from .agent.model import ModelError
    from .agent.server import ServerModel

    name = f"agent: {cfg.agent.uri}"
    try:
        path = store.resolve(cfg.agent.model, explicit_path=cfg.agent.model_path or None)
        served = ServerModel(path, cfg.agent, cfg.agent.uri).check_server()
    except ModelError as e:
        return out + [Finding("remote", name, False, e.message,
                              "start the inference server there (README: The agent on another machine), or fix "
                              "agent.uri / agent.model")]
    return out + [Finding("remote", name, True, f"answers, serving {served}; same vocabulary as {path.name}")]


def check_agent_model(cfg: Config, store: AssetStore) -> Finding:
    """What the configured agent model is (architecture, cache kind, call dialect, thinking), read from its GGUF
    without loading the weights; only where the file is already there (doctor never assembles or downloads)."""
    try:
        status = store.status(cfg.agent.model, explicit_path=cfg.agent.model_path or None)
    except AssetError as e:
        return Finding("models", "agent model", False, e.message, e.message)
    if status.source not in ("path", "cache") or status.path is None:
        return Finding("models", "agent model", False, "not read: the model is not in place yet",
                       "hearthd models fetch", required=False)
    from .agent.model import ModelError, read_capabilities

    try:
        caps = read_capabilities(status.path)
    except ModelError as e:
        # A truncated download or a damaged file looks like this too: say what is there, and how to get it whole.
        size = status.path.stat().st_size if status.path.is_file() else 0
        detail = f"cannot be loaded: {e} ({size / 1e6:.1f} MB; truncated, corrupt, or no GGUF model)"
        fix = "hearthd models fetch --force (assembles it again)" if status.source == "cache" else \
            "set agent.model_path to a whole Qwen-family tool-calling GGUF"
        return Finding("models", "agent model", False, detail, fix)
    detail = caps.summary()
    if cfg.agent.engine == "local":
        from .agent.model import default_weights_dir
        from .agent.weights import describe

        detail += f"; {describe(status.path, cfg.agent.weights, default_weights_dir())}"
    thinking = cfg.agent.thinking_budget
    if thinking and not caps.thinking:
        return Finding("models", "agent model", False, f"{detail}; agent.thinking = {thinking} is ignored",
                       'set agent.thinking = "off"', required=False)
    if not caps.tools:
        return Finding("models", "agent model", False, f"{detail}; its template has no tools",
                       "use a tool-calling GGUF (Qwen2.5, Qwen3, Qwen3.5/BotPsy)")
    return Finding("models", "agent model", True, detail + (f"; thinking up to {thinking} tokens" if thinking else ""))


def local_wake_findings(cfg: Config, store: AssetStore | None, memo: dict[str, Any]) -> list[Finding]:
    """microWakeWord here: the configured wake word is one of its built-in models."""
    try:
        from pymicro_wakeword import Model

        names = [m.value for m in Model]
        ok = cfg.wake.model in names
        return [Finding("models", f"wake word: {cfg.wake.model}", ok, "built into pymicro-wakeword" if ok
                        else f"not a built-in model ({', '.join(names)})", "" if ok else "set wake.model")]
    except ImportError as e:
        return [Finding("models", "wake word", False, str(e), "pip install pymicro-wakeword")]


def local_voice_findings(cfg: Config, store: AssetStore | None, memo: dict[str, Any]) -> list[Finding]:
    """The voices here: each Piper voice named by tts.voices in place, espeak-ng where a voice needs it, and the voice
    each language gets and why."""
    from .audio.tts import VOICE_ENGINES

    wanted = []
    for lang, voice in cfg.tts.voices.items():
        engine, _, name = voice.partition(":")
        if engine == "piper" and (name.endswith(".onnx") or os.sep in name):
            wanted.append((f"tts.{lang}", "", name))  # a Piper voice given by its path
        elif engine in VOICE_ENGINES:
            wanted += [(f"tts.{lang}", asset, "") for asset in VOICE_ENGINES[engine].assets(name)]
    out = _model_findings(store, wanted) if store is not None else []
    espeak_needed = any(VOICE_ENGINES[v.partition(":")[0]].uses_espeak for v in cfg.tts.voices.values()
                        if v.partition(":")[0] in VOICE_ENGINES)
    espeak = shutil.which("espeak-ng")
    out.append(Finding("tts", "espeak-ng", bool(espeak), espeak or "not installed",
                       "" if espeak else "apt-get install espeak-ng (Kokoro reads its phonemes; the fallback voice)",
                       required=espeak_needed))
    return out + check_voices(cfg, store)


def voice_choices(cfg: Config, store: AssetStore) -> list[Any]:
    """The voice each language speaks with, and why, judged without loading any (the daemon's own rules)."""
    from .daemon.components import voice_bank

    bank = voice_bank(cfg, store)
    return [bank.choice(lang) for lang in sorted(cfg.tts.voices)]


def check_voices(cfg: Config, store: AssetStore | None) -> list[Finding]:
    """One line per language: the voice it gets and why; a robotic fallback is a warning that says what to do."""
    if store is None:
        return []
    out = []
    for choice in voice_choices(cfg, store):
        fix = "" if choice.natural else ("see why above" if "cannot speak" in choice.why
                                         else f"a natural voice: tts.voices.{choice.lang} (README: Voices)")
        out.append(Finding("tts", f"voice {choice.lang}", choice.natural, f"{choice.spec} — {choice.why}", fix,
                           required=False))
    return out


def check_remote(cfg: Config) -> list[Finding]:
    """Each stage given to a service elsewhere: whether it answers and offers what hearthd will ask of it."""
    return check_stages(cfg, None, remote=True)


def remote_findings(cfg: Config, store: AssetStore | None, memo: dict[str, Any], stage: str) -> list[Finding]:
    """A stage given to a Wyoming service (`<stage>.engine = "wyoming"`): the service answers `describe` and offers
    what hearthd will ask of it (speech to text; a voice, the one named if any; the configured wake word)."""
    from .audio.remote import describe

    if stage == "wake" and not cfg.wake.enabled:
        return []
    uri = getattr(cfg, stage).uri
    key = f"wyoming:{uri}"
    if key not in memo:
        try:
            memo[key] = describe(uri)
        except Exception as e:  # noqa: BLE001 - whatever the remote did, doctor says it and goes on
            memo[key] = e
    info = memo[key]
    if isinstance(info, Exception):
        return [Finding("remote", f"{stage}: {uri}", False, f"not answering: {info}",
                        f"start the Wyoming service there, or fix {stage}.uri")]
    return [_offered(cfg, stage, uri, info)]


def _offered(cfg: Config, stage: str, uri: str, info: Any) -> Finding:
    """Whether the service's `info` offers what `stage` needs of it, and what it offers."""
    kind = {"stt": "asr", "tts": "tts", "wake": "wake"}[stage]
    programs = [p for p in getattr(info, kind) if getattr(p, "installed", True)]
    items = [m for p in programs for m in (p.models if kind != "tts" else p.voices) if getattr(m, "installed", True)]
    names = [m.name for m in items]
    if not programs:
        return Finding("remote", f"{stage}: {uri}", False, f"answers, but offers no {kind} service",
                       f"point {stage}.uri at a Wyoming {kind} service")
    wanted = cfg.tts.voice if stage == "tts" else cfg.wake.model if stage == "wake" else ""
    if stage == "wake":  # a wake model may be named by its phrase ("okay nabu") as well as by its name
        phrases = {(m.phrase or "").lower() for m in items} | {n.lower() for n in names}
        found = wanted.lower() in phrases or wanted.lower().replace("_", " ") in phrases
    else:
        found = not wanted or wanted in names
    what = f"{', '.join(p.name for p in programs)}: {', '.join(names) or 'no models listed'}"
    if not found:
        return Finding("remote", f"{stage}: {uri}", False, f"{what}; {wanted!r} is not among them",
                       f"set {stage}.{'voice' if stage == 'tts' else 'model'} to one it offers")
    return Finding("remote", f"{stage}: {uri}", True, what)


def check_audio() -> list[Finding]:
    try:
        import sounddevice as sd
    except OSError as e:  # PortAudio itself is missing
        return [Finding("audio", "PortAudio", False, str(e), "apt-get install libportaudio2")]
    try:
        devices = sd.query_devices()
    except Exception as e:
        return [Finding("audio", "devices", False, f"cannot list devices: {e}", "check the sound server")]
    inputs = [d["name"] for d in devices if d.get("max_input_channels", 0) > 0]
    outputs = [d["name"] for d in devices if d.get("max_output_channels", 0) > 0]
    fix = "connect a microphone/speaker or start PipeWire/PulseAudio; file mode (--input/--output) still works"
    return [
        Finding("audio", "input device", bool(inputs), ", ".join(inputs[:3]) or "no input device found",
                "" if inputs else fix, required=False),
        Finding("audio", "output device", bool(outputs), ", ".join(outputs[:3]) or "no output device found",
                "" if outputs else fix, required=False),
    ]


# What each desktop family needs, on which bus: (finding name, bus, well-known name, what fails without it).
DBUS_SERVICES = (
    ("notifications", "session", "org.freedesktop.Notifications", "no desktop notifications (spoken replies only)"),
    ("power, screen (logind)", "system", "org.freedesktop.login1", "lock, suspend, power off, brightness"),
    ("battery (UPower)", "system", "org.freedesktop.UPower", "battery questions"),
    ("Wi-Fi (NetworkManager)", "system", "org.freedesktop.NetworkManager", "Wi-Fi on/off and the connection"),
)


def check_dbus(cfg: Config | None = None) -> list[Finding]:
    """Both buses, then which freedesktop services hearthd found on them (each one missing only disables its
    family, said as "not available here")."""
    cfg = cfg or Config()
    out = []
    reachable = {}
    for bus, env, configured, fix in (
        ("session", "DBUS_SESSION_BUS_ADDRESS", cfg.dbus.session_address,
         "run inside a desktop session, or dbus-run-session"),
        ("system", "DBUS_SYSTEM_BUS_ADDRESS", cfg.dbus.system_address, "start dbus (systemctl start dbus)"),
    ):
        address = configured or os.environ.get(env) or ("unix:path=/run/dbus/system_bus_socket" if bus == "system"
                                                        else "")
        ok, detail = _dbus_reachable(address)
        reachable[bus] = ok
        out.append(Finding("dbus", f"{bus} bus", ok, detail, "" if ok else fix, required=False))
    if not cfg.dbus.enabled:
        return out + [Finding("dbus", "services", True, "device control is off (dbus.enabled = false)",
                              required=False)]
    import asyncio

    names = asyncio.run(_bus_names(cfg, [b for b, ok in reachable.items() if ok]))
    players = sorted(n.removeprefix("org.mpris.MediaPlayer2.") for n in names.get("session", set())
                     if n.startswith("org.mpris.MediaPlayer2."))
    out.append(Finding("dbus", "media players (MPRIS)", bool(players),
                       ", ".join(players) if players else "none running now",
                       "" if players else "start a player (any MPRIS one: vlc, mpv with mpv-mpris, a browser…)",
                       required=False))
    for label, bus, name, loses in DBUS_SERVICES:
        found = name in names.get(bus, set())
        out.append(Finding("dbus", label, found, f"{name} on the {bus} bus" if found else f"{name} not found",
                           "" if found else f"without it: {loses}", required=False))
    return out


async def _bus_names(cfg: Config, buses: list[str]) -> dict[str, set[str]]:
    """Names owned or activatable on each reachable bus."""
    from .tools.bus import Bus, ServiceFailed, ServiceMissing

    bus = Bus(cfg.dbus.session_address, cfg.dbus.system_address, min(cfg.dbus.timeout_s, 2.0))
    found: dict[str, set[str]] = {}
    try:
        for which in buses:
            names: set[str] = set()
            for member in ("ListNames", "ListActivatableNames"):
                try:
                    (listed,) = await bus.call(which, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                               "org.freedesktop.DBus", member)
                    names.update(str(n) for n in listed)
                except (ServiceMissing, ServiceFailed):
                    pass
            found[which] = names
    finally:
        await bus.close()
    return found


def check_volume(cfg: Config) -> list[Finding]:
    from .tools.volume import volume_backend

    program = volume_backend(cfg.audio.volume_backend).program
    path = shutil.which(program)
    return [Finding("audio", "system volume", bool(path), f"{program} ({path})" if path else f"{program} not found",
                    "" if path else "install wireplumber (wpctl) or pulseaudio-utils (pactl)", required=False)]


def _dbus_reachable(address: str) -> tuple[bool, str]:
    if not address:
        return False, "no address (DBUS_SESSION_BUS_ADDRESS is not set)"
    for part in address.split(";"):
        kind, _, params = part.partition(":")
        opts = dict(p.split("=", 1) for p in params.split(",") if "=" in p)
        target = opts.get("path") or ("\0" + opts["abstract"] if "abstract" in opts else "")
        if kind == "unix" and target:
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                    s.settimeout(1.0)
                    s.connect(target)
                return True, f"reachable at {address}"
            except OSError as e:
                return False, f"not reachable at {address} ({e.strerror or e})"
        if kind == "tcp" and "host" in opts and "port" in opts:
            return _tcp(opts["host"], int(opts["port"]))
    return False, f"cannot use the address {address!r}"


def _tcp(host: str, port: int) -> tuple[bool, str]:
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return True, f"reachable at {host}:{port}"
    except OSError as e:
        return False, f"nothing listening at {host}:{port} ({e.strerror or e})"


def check_mqtt(cfg: Config) -> list[Finding]:
    if not cfg.mqtt.enabled:
        return [Finding("mqtt", "broker", True, "disabled in config (mqtt.enabled = false)", required=False)]
    ok, detail = _tcp(cfg.mqtt.host, cfg.mqtt.port)
    fix = "" if ok else (f"start a broker on {cfg.mqtt.host}:{cfg.mqtt.port} (apt-get install mosquitto), "
                         "set mqtt.host/mqtt.port, or mqtt.enabled = false")
    return [Finding("mqtt", "broker", ok, detail, fix, required=False)]


def check_state(cfg: Config) -> list[Finding]:
    """The state directory: can it be written (a full or read-only disk: alarms and the audit cannot be saved, reads
    still work), stores that were moved aside as corrupt, and audit turns that could not be recorded."""
    from .config import state_dir
    from .daemon.audit import AuditLog
    from .private import disk_state, state_problems

    where = state_dir()
    out: list[Finding] = []
    disk = disk_state(where)
    problems = state_problems(where)
    if problems:  # a file or a broken link where the directory should be, a store that is a link or unreadable
        out.extend(Finding("state", "state directory", False, p,
                           "move it out of the way; hearthd makes a fresh one (what it held is yours to keep)",
                           required=False) for p in problems)
    elif disk:
        out.append(Finding("state", "state directory", False,
                           f"{where}: the disk is {disk}; new alarms, cancels and the audit trail cannot be saved "
                           "(reads, questions and devices still work)",
                           "free some space there" if disk == "full" else "mount it read-write", required=False))
    elif where.is_dir() and not os.access(where, os.W_OK):
        out.append(Finding("state", "state directory", False, f"{where} cannot be written by this user",
                           f"chown it to this user (or run hearthd as its owner): {where}", required=False))
    else:
        st = os.statvfs(where if where.is_dir() else where.parent if where.parent.is_dir() else "/")
        out.append(Finding("state", "state directory", True,
                           f"{where} ({st.f_bavail * st.f_frsize / 1e6:.0f} MB free)", required=False))
    copies = sorted(p for p in (where.glob("*.corrupt-*") if where.is_dir() else [])
                    if not p.name.endswith(("-wal", "-shm", "-journal")))
    for copy in copies:
        name = copy.name.split(".corrupt-", 1)[0]
        out.append(Finding("state", name, False, f"was corrupt; kept as {copy}, a fresh {name} is in use",
                           f"look at it or delete it: rm {copy}", required=False))
    if cfg.policy.audit:
        audit = AuditLog(where / "audit.jsonl", cfg.policy.audit_max_bytes, cfg.policy.audit_keep)
        rows = audit.tail(1000)
        lost = [r for r in rows if isinstance(r.get("lost"), int) and r["lost"] > 0]
        if lost:
            n = sum(r["lost"] for r in lost)
            out.append(Finding("state", "audit trail", False,
                               f"{n} turn{'s' if n != 1 else ''} could not be recorded (the disk was full or "
                               f"read-only; last noted {lost[-1].get('ts', '?')})", required=False))
        if audit.skipped:
            out.append(Finding("state", "audit trail", False, f"{audit.skipped} unreadable line(s) skipped",
                               required=False))
    return out


def run_checks(cfg: Config, store: AssetStore) -> list[Finding]:
    """Every check, in display order."""
    stages = check_stages(cfg, store)
    first = {area: i for i, area in reversed(list(enumerate(f.area for f in stages)))}
    stages.sort(key=lambda f: first[f.area])  # each area once (the stages' findings interleave models and voices)
    return stages + check_audio() + check_volume(cfg) + check_dbus(cfg) + check_mqtt(cfg) + check_state(cfg)

