"""A hostile run of config reloads on the running daemon (issue 26): some 370 generated bad config files (fixed
seed), in groups: a wrong type for every key of every section (derived from the config's dataclasses), numbers out of
their ranges, nan and inf for every number, unknown sections and keys, nesting far past any bound, files that are no
TOML (truncated, binary, not UTF-8, NUL bytes, UTF-16), files of a few MB, a config path that becomes a directory, a
FIFO, a dangling symlink or unreadable, and values hearthd cannot serve (a language it has no templates for, a time
zone on Mars, an MQTT wildcard in a topic, a 300-character host, paths no file system takes).

Each is written where the running `hearthd run --headless --json` reads its config, then SIGHUP. Within RELOAD_S
systemd must hear RELOADING=1 then READY=1 (never left at RELOADING) with a STATUS that says the reload was rejected;
the trace must show an `error` event with code config-invalid; the daemon stays up, and its log holds no traceback.
The config in effect stays what it was: every bad file also changes one setting that a reload applies live, and a
valid change mixed in every few inputs must come back as a `reload` event naming exactly the keys that differ from
the last *valid* file (a bad file applied, even in part, shows there), in the language it set. After each group a
normal request, "what time is it" asked over D-Bus (the template path: no model loads), is answered. SIGTERM still
ends the daemon with exit 0. The counts are printed as one JSON line (`pytest -s`)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import queue
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import tomllib
import typing
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hearthd import config as hconfig
from hearthd.config import Config
from hearthd.daemon.reload import _is_live
from hearthd.locale import phrase

from .test_dbus_service import Client
from .test_service import Daemon

SEED = 26
RELOAD_S = 20.0  # RELOADING=1, READY=1 and the trace event of one reload: later is a hang
ASK_S = 60.0  # the request after each group
VALID_EVERY = 7  # a valid change after every this many bad files
MAX_PROBLEMS = 8  # stop early past this many (each hang costs RELOAD_S)
STOP_S = 20.0

Key = tuple[str, str]  # (section, key)

# Settings a reload applies live, with values each may take: the valid changes and the decoys are made of them.
LIVE_VALUES: dict[Key, list[Any]] = {
    ("general", "language"): ["en", "ru", "hi"],
    ("agent", "min_relevance"): [0.0, 0.4, 0.55, 0.9],
    ("agent", "clarify_turns"): [1, 2, 4],
    ("agent", "max_calls"): [1, 3, 5],
    ("policy", "confirm_timeout_s"): [5.0, 15.0, 42.0],
    ("policy", "audit_keep"): [1, 3, 5],
    ("alarms", "grace_s"): [0.0, 60.0, 300.0, 3600.0],
    ("alarms", "repeat_s"): [5.0, 10.0, 30.0, 45.5],
    ("alarms", "max_rings"): [1, 3, 10, 20],
    ("alarms", "snooze_minutes"): [1, 5, 9, 60],
}
assert all(_is_live(*key) for key in LIVE_VALUES)
FIXED: dict[Key, Any] = {("agent", "model"): ""}  # no model to load in the background: the fast path answers


def _sections() -> dict[str, type]:
    """Each section of the config and its dataclass ([[satellites]]: the item's)."""
    out: dict[str, type] = {}
    for name, tp in typing.get_type_hints(Config).items():
        if name == "source":
            continue
        out[name] = typing.get_args(tp)[0] if typing.get_origin(tp) is list else tp
    return out


SECTIONS = _sections()
ORDER = {(s, f.name): i for i, (s, f) in enumerate(
    (s, f) for s, tp in SECTIONS.items() for f in dataclasses.fields(tp))}  # the order a reload reports keys in


def lit(value: Any) -> str:
    """A Python value as a TOML literal (floats as repr writes them: inf, nan and 1e+300 are TOML too)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # ASCII, \uXXXX escapes: a TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(lit(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{name(k)} = {lit(v)}" for k, v in value.items()) + " }"
    raise TypeError(value)


def name(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


@dataclass
class Bad:
    """One bad config: raw TOML values over the valid config (`put`), or the whole file from the valid one's bytes
    (`raw`), or a change to the config's path itself (`path`: False when this system cannot make it)."""

    what: str
    put: dict[Key, str] = field(default_factory=dict)
    top: str = ""  # lines before the first table
    tail: str = ""  # text after the last table
    drop: tuple[str, ...] = ()  # sections left out
    raw: Callable[[bytes], bytes] | None = None
    path: Callable[[Path], bool] | None = None


def render(values: dict[Key, Any], bad: Bad | None = None) -> bytes:
    bad = bad or Bad("valid")
    tables: dict[str, dict[str, str]] = {}
    for (section, key), value in values.items():
        tables.setdefault(section, {})[key] = lit(value)
    for (section, key), raw in bad.put.items():
        tables.setdefault(section, {})[key] = raw
    text = bad.top + "".join(f"[{name(s)}]\n" + "".join(f"{name(k)} = {v}\n" for k, v in keys.items())
                             for s, keys in tables.items() if s not in bad.drop) + bad.tail
    data = text.encode()
    return bad.raw(data) if bad.raw is not None else data


# -- the groups ------------------------------------------------------------------------------------------------

DATE = "1979-05-27T07:32:00Z"
WRONG: dict[Any, list[str]] = {
    str: ["5", "-1.5", "true", '["en"]', "{ a = 1 }", DATE],
    int: ['"5"', "1.5", "true", "[1]", "{ a = 1 }", DATE, "nan"],
    float: ['"0.5"', "true", "[0.5]", "{ a = 0.5 }", "07:32:00"],
    bool: ['"true"', "1", "0", "[true]", "{ a = true }", '"yes"'],
    list[str]: ['"en"', "5", "{ a = 1 }", "[1]", '["en", 2]', '[["en"]]'],
    dict[str, str]: ['"x"', "5", '["x"]', "{ en = 1 }", '{ en = ["x"] }', '{ en = { a = "x" } }'],
    dict[str, list[str]]: ['"x"', "5", '["x"]', '{ a = "x" }', "{ a = [1] }", "{ a = { b = 1 } }"],
}
SATELLITE = '[[satellites]]\nuri = "tcp://kitchen-pi:10700"\n'


def wrong_types(rng: random.Random) -> list[Bad]:
    """A wrong type for every key of every section, the satellites' included, and for whole sections."""
    out = []
    for section, tp in SECTIONS.items():
        hints = typing.get_type_hints(tp)
        for f in dataclasses.fields(tp):
            choices = WRONG[hints[f.name]]
            if f"{section}.{f.name}" in hconfig._WORD_OR_NUMBER:  # agent.thinking takes a number too
                choices = [c for c in choices if not re.fullmatch(r"-?\d+", c)]
            wrong = rng.choice(choices)
            if section == "satellites":
                head = "[[satellites]]\n" if f.name == "uri" else SATELLITE
                out.append(Bad(f"satellites.{f.name} = {wrong}", tail=f"{head}{f.name} = {wrong}\n"))
            else:
                out.append(Bad(f"{section}.{f.name} = {wrong}", put={(section, f.name): wrong}))
    for section in rng.sample([s for s in SECTIONS if s != "satellites"], 4):
        wrong = rng.choice(['"x"', "5", "[1]", "true"])
        out.append(Bad(f"{section} = {wrong}", top=f"{section} = {wrong}\n", drop=(section,)))
    out += [Bad("satellites = \"x\"", top='satellites = "x"\n'), Bad("satellites = [1]", top="satellites = [1]\n"),
            Bad("[satellites] as a table", tail='[satellites]\nuri = "tcp://kitchen-pi:10700"\n')]
    return out


# Ranges the validator checks by hand (the rest are hearthd.config._RANGES): key, values out of range.
EXPLICIT_RANGES: list[tuple[str, list[Any]]] = [
    ("vad.threshold", [0.0, 1.0, -0.5, 1e300]), ("mqtt.port", [0, -1, 65536, 10**30]),
    ("mqtt.max_payload_bytes", [1023, 16_777_217]), ("mqtt.max_json_depth", [3, 257]),
    ("mqtt.max_text_chars", [15, 100_001]), ("mqtt.max_entities", [0, 100_001]), ("mqtt.max_turns", [0, 65]),
    ("audio.volume_step", [0, 51]), ("audio.max_input_s", [0.0, -1.0]),
    ("wyoming.max_connections", [0, 10_001]), ("wyoming.idle_timeout_s", [0.5, 86_401.0]),
    ("dbus.timeout_s", [0.0, -1.0]),
    ("alarms.grace_s", [1e300, 10**30]), ("alarms.repeat_s", [1e300, 1e15]),  # more than a timedelta holds
]


def out_of_range(rng: random.Random) -> list[Bad]:
    """Below the lowest, the lowest where it is refused, above the highest, huge: from the validator's own table."""
    pool: list[tuple[str, Any]] = []
    for key, low, high, above in hconfig._RANGES:
        section, item = key.split(".")
        integer = typing.get_type_hints(SECTIONS[section])[item] is int
        pool.append((key, int(low) - 1 if integer else low - 0.5))
        pool.append((key, -(10**30) if integer else -1e300))
        if above:
            pool.append((key, int(low) if integer else float(low)))
        if high is not None:
            pool.append((key, int(high) + 1 if integer else high + 0.5))
            pool.append((key, 10**30 if integer else 1e300))
    explicit = [(key, v) for key, values in EXPLICIT_RANGES for v in values]
    rng.shuffle(pool)
    chosen = sorted(set(explicit + pool[:50]), key=str)
    rng.shuffle(chosen)
    out = []
    for key, v in chosen:
        section, item = key.split(".")
        out.append(Bad(f"{key} = {lit(v)}", put={(section, item): lit(v)}))
    return out


def non_finite(rng: random.Random) -> list[Bad]:
    """nan, inf or -inf for every number of every section (written as TOML writes them)."""
    out = []
    for section, tp in SECTIONS.items():
        hints = typing.get_type_hints(tp)
        for f in dataclasses.fields(tp):
            if hints[f.name] is float:
                v = rng.choice(["nan", "inf", "-inf", "+nan"])
                out.append(Bad(f"{section}.{f.name} = {v}", put={(section, f.name): v}))
    return out


def unknown(rng: random.Random) -> list[Bad]:
    """A misspelt key in every section, sections that do not exist, keys used as sections, odd key names."""
    out = []
    for section, tp in SECTIONS.items():
        names = [f.name for f in dataclasses.fields(tp)]
        real = rng.choice(names)
        typo = rng.choice([real + "s", real.upper(), real.replace("_", "-") if "_" in real else real + "_"])
        typo = "x_" + real if typo in names else typo  # stt.language + "s" is a key too
        if section == "satellites":
            out.append(Bad(f"satellites[0].{typo}", tail=f"{SATELLITE}{name(typo)} = 1\n"))
        else:
            out.append(Bad(f"{section}.{typo}", put={(section, typo): "1"}))
    out += [Bad("[nonsense]", tail="[nonsense]\nx = 1\n"), Bad("[General]", tail='[General]\nlanguage = "en"\n'),
            Bad("[stt.extra]", tail="[stt.extra]\nx = 1\n"), Bad("source = (internal)", top='source = "x"\n'),
            Bad('"" = 1', top='"" = 1\n'), Bad('"general.language" = "ru"', top='"general.language" = "ru"\n'),
            Bad("[agent.thinking] as a table", tail="[agent.thinking]\nx = 1\n"),
            Bad("[general.area] as a table", tail="[general.area]\nx = 1\n"),
            Bad("a 100 kB key", put={("general", "k" * 100_000): "1"}),
            Bad("a NUL in a key", put={("mqtt", "host\0"): '"x"'}),
            Bad("[[general]]", tail='[[general]]\nlanguage = "en"\n', drop=("general",))]
    return out


def nested(rng: random.Random) -> list[Bad]:
    """Arrays, inline tables and dotted keys nested from 2 to 20,000 levels, where each kind of value is read."""
    kinds: list[tuple[str, Callable[[int], Bad]]] = [
        ("stt.languages = [[[…", lambda n: Bad("", put={("stt", "languages"): "[" * n + "]" * n})),
        ("tts.voices = {a = {a = …", lambda n: Bad("", put={("tts", "voices"): "{ a = " * n + '"x"' + " }" * n})),
        ("mqtt.floors = {a = [[…", lambda n: Bad("", put={("mqtt", "floors"): "{ a = " + "[" * n + "]" * n + " }"})),
        ("[mqtt.aliases.a.a.…]", lambda n: Bad("", tail="[mqtt.aliases." + ".".join(["a"] * n) + "]\nx = 1\n")),
        ("general.language = {a.a.… = 1}",
         lambda n: Bad("", put={("general", "language"): "{ " + ".".join(["a"] * n) + " = 1 }"})),
        ("policy.confirm = [{a = [{…", lambda n: Bad("", put={("policy", "confirm"): "[{ a = " * n + "1" + " }]" * n})),
    ]
    out = []
    for what, make in kinds:
        for depth in sorted(rng.sample([2, 10, 100, 300, 500, 1000, 5000, 20_000], 4)):
            bad = make(depth)
            bad.what = f"{what} ({depth} levels)"
            out.append(bad)
    return out


def _cut(data: bytes) -> bytes:
    """Cut short right after an opening quote: an unterminated string, as a file caught mid-write."""
    quotes = [m.end() for m in re.finditer(rb'= "', data)]
    return data[:quotes[len(quotes) // 2]] if quotes else data[: len(data) // 2] + b'["'


def _truncated(k: int) -> Callable[[bytes], bytes]:
    def cut(data: bytes) -> bytes:
        short = data[: k % max(len(data), 1)]
        try:
            tomllib.loads(short.decode())
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            return short
        return _cut(data)  # that cut still parsed (at a line's end): cut inside a string instead
    return cut


def _around(before: bytes, after: bytes) -> Callable[[bytes], bytes]:
    return lambda data: before + data + after


def _instead(blob: bytes) -> Callable[[bytes], bytes]:
    return lambda _: blob


def not_toml(rng: random.Random) -> list[Bad]:
    """Truncated, binary, not UTF-8, NUL bytes, UTF-16, control characters, and grammar TOML does not have."""
    blobs = [rng.randbytes(n) for n in (64, 1000, 65_536)]
    out = [Bad(f"truncated at byte {k}", raw=_truncated(k)) for k in rng.sample(range(5, 600), 4)]
    out += [Bad("truncated inside a string", raw=_cut)]
    out += [Bad(f"{len(b)} random bytes", raw=_instead(b"\xff" + b)) for b in blobs]
    out += [Bad(f"random bytes after the config ({len(b)})", raw=_around(b"", b"\xfe" + b)) for b in blobs[:2]]
    out += [
        Bad("\\xff\\xfe in a string", raw=_around(b"", b'[wake]\nmodel = "\xff\xfe"\n')),
        Bad("an overlong UTF-8 /", raw=_around(b"", b'[wake]\nmodel = "\xc0\xaf"\n')),
        Bad("a surrogate in UTF-8", raw=_around(b"", b'[wake]\nmodel = "\xed\xa0\x80"\n')),
        Bad("UTF-16", raw=lambda d: d.decode().encode("utf-16")),
        Bad("a NUL byte in a value", raw=_around(b"", b'[wake]\nmodel = "a\0b"\n')),
        Bad("a NUL byte first", raw=_around(b"\0", b"")),
        Bad("a UTF-8 BOM", raw=_around(b"\xef\xbb\xbf", b"")),
        Bad("a raw control character", raw=_around(b"", b'[wake]\nmodel = "a\x01b"\n')),
        Bad("a key twice", tail='[wake]\nmodel = "alexa"\nmodel = "alexa"\n'),
        Bad("a table twice", tail="[wake]\n[wake]\n"),
        Bad("an unclosed header", tail="[wake\nmodel = 1\n"),
        Bad("a key with no value", tail="[wake]\nmodel =\n"),
        Bad("two keys on a line", tail='[wake]\nmodel = "alexa" enabled = true\n'),
        Bad("an unterminated multi-line string", tail='[wake]\nmodel = """alexa\n'),
        Bad("an integer of 5,000 digits", tail="[vad]\nmin_speech_ms = " + "1" * 5000 + "\n"),
        Bad("a float without digits after the point", tail="[vad]\nthreshold = 1.e5\n"),
        Bad("an impossible date", tail="[wake]\nmodel = 1979-02-30T00:00:00\n"),
        Bad("a bare word", tail="[wake]\nmodel = alexa\n"),
        Bad("text that is no TOML", raw=_around(b"This is not a config file.\n", b"")),
    ]
    return out


def huge(rng: random.Random) -> list[Bad]:
    """Files of a few MB: one huge value, a huge array, a huge table, a huge key, and one past any config's size."""
    mb = 1024 * 1024
    n = rng.randint(2 * mb, 3 * mb)
    return [
        Bad(f"general.language of {n} characters", put={("general", "language"): lit("x" * n)}),
        Bad(f"mqtt.host of {n} characters", put={("mqtt", "host"): lit("h" * n)}),
        Bad("stt.languages of 400,000 items, one unknown",
            put={("stt", "languages"): "[" + '"en", ' * 400_000 + '"xx"]'}),
        Bad("mqtt.aliases of 100,000 names, one a number",
            tail="[mqtt.aliases]\n" + "".join(f'n{i} = "Light {i}"\n' for i in range(100_000)) + "last = 1\n"),
        Bad(f"a key of {n} characters", tail=f"[wake]\n{'k' * n} = 1\n"),
        Bad("5 MB of comments before a good config", raw=_around((b"# " + b"c" * 98 + b"\n") * (5 * mb // 100), b"")),
    ]


def unservable(rng: random.Random) -> list[Bad]:
    """Values of the right type that hearthd cannot serve."""
    bads = [
        ("stt", "language", '"de"'), ("stt", "language", '"EN"'), ("general", "language", '"de"'),
        ("general", "language", '"EN"'), ("general", "timezone", lit("Mars/Base")),
        ("general", "timezone", lit("Europe/" + "M" * 249)), ("general", "timezone", lit("../../etc/passwd")),
        ("general", "timezone", lit("Europe/Moscow\0")),
        ("mqtt", "discovery_prefix", '"ha/#"'), ("mqtt", "discovery_prefix", '"+"'),
        ("mqtt", "discovery_prefix", '"/ha"'), ("mqtt", "discovery_prefix", '""'), ("mqtt", "topic_base", '"a/+/b"'),
        ("mqtt", "node_id", '"a/b"'), ("mqtt", "client_id", lit("c" * 200)), ("mqtt", "host", lit("h" * 300)),
        ("mqtt", "host", '"my host"'), ("mqtt", "host", lit("h\0")),
        ("assets", "cache_dir", lit("/x" * 3000)), ("assets", "cache_dir", lit("/" + "a" * 300)),
        ("assets", "cache_dir", lit("~a\0b/models")), ("stt", "model_path", lit("/m" * 2100)),
        ("agent", "model_path", lit("/models/" + "q" * 256 + ".gguf")), ("mqtt", "ca_file", lit("/etc/ca\0.pem")),
        ("mqtt", "key_file", lit("k" * 5000)),
        ("tts", "voices", '{ en = "flite:kal" }'), ("tts", "voices", '{ hi = "kokoro:no_such_voice" }'),
        ("tts", "voices", '{ ru = "festival:../../x" }'), ("tts", "voices", '{ de = "piper:thorsten" }'),
        ("tts", "voices", '{ en = "joe" }'), ("stt", "languages", "[]"), ("stt", "languages", '["de"]'),
        ("stt", "languages", '["en", "EN"]'), ("wake", "engine", '"porcupine"'), ("stt", "engine", '"wyoming"'),
        ("tts", "uri", '"http://tts:10200"'), ("stt", "uri", '"tcp://[::1"'), ("wake", "uri", '"tcp://wake-pi"'),
        ("tts", "uri", '"unix://"'), ("agent", "thinking", '"lots"'), ("agent", "thinking", '"²"'),
        ("agent", "thinking", '"0"'), ("agent", "thinking", '"5000"'), ("agent", "thinking", lit("1" * 5000)),
        ("audio", "volume_backend", '"alsa"'), ("wyoming", "language", '"auto"'),
    ]
    out = [Bad(f"{s}.{k} = {v[:40]}", put={(s, k): v}) for s, k, v in bads]
    out += [Bad("a satellite that rings everywhere", tail=f'{SATELLITE}rings = "everywhere"\n'),
            Bad("a satellite without a uri", tail='[[satellites]]\narea = "Kitchen"\n')]
    rng.shuffle(out)
    return out


def paths(rng: random.Random) -> list[Bad]:
    """The config's path becomes something else: each returns False when this system cannot make it so (as root,
    a mode of 000 still reads)."""
    def directory(p: Path) -> bool:
        p.mkdir()
        return True

    def dangling(p: Path) -> bool:
        p.symlink_to(p.parent / "nowhere.toml")
        return True

    def loop(p: Path) -> bool:
        p.symlink_to(p)
        return True

    def fifo(p: Path) -> bool:
        os.mkfifo(p)
        return True

    def unix_socket(p: Path) -> bool:
        with socket.socket(socket.AF_UNIX) as s:
            try:
                s.bind(str(p))
            except OSError:  # a path too long for sun_path
                return False
        return True

    def missing(p: Path) -> bool:
        return True

    def parent_is_a_file(p: Path) -> bool:
        p.parent.rmdir()
        p.parent.write_text("")
        return True

    def a_directory_symlink(p: Path) -> bool:
        p.symlink_to(p.parent.parent)
        return True

    def unreadable(p: Path) -> bool:  # a valid config with a change in it: as a non-root user it cannot be read
        p.write_bytes(GOOD_WITH_A_CHANGE)
        p.chmod(0)
        return not _readable(p)

    def unsearchable(p: Path) -> bool:  # the directory it is in may not be searched: Path.exists() raises EACCES
        p.write_bytes(GOOD_WITH_A_CHANGE)
        p.parent.chmod(0)
        return not _readable(p)

    cases = [directory, dangling, loop, fifo, unix_socket, missing, parent_is_a_file, a_directory_symlink,
             unreadable, unsearchable]
    rng.shuffle(cases)
    return [Bad(f"the path: {case.__name__.replace('_', ' ')}", path=case) for case in cases]


def _readable(p: Path) -> bool:
    try:
        with p.open("rb"):
            return True
    except OSError:
        return False


GOOD_WITH_A_CHANGE = render({**FIXED, **{k: v[-1] for k, v in LIVE_VALUES.items()}})

GROUPS: list[tuple[str, Callable[[random.Random], list[Bad]]]] = [
    ("wrong-types", wrong_types), ("out-of-range", out_of_range), ("non-finite", non_finite), ("unknown", unknown),
    ("nested", nested), ("not-toml", not_toml), ("huge", huge), ("unservable", unservable), ("paths", paths)]


# -- the run -------------------------------------------------------------------------------------------------

class Watched(Daemon):
    """The daemon of test_service, its stderr read as it comes (a full pipe would stall its log)."""

    def __init__(self, tmp: Path, config: Path, env: dict[str, str]) -> None:
        super().__init__(tmp, config, env=env)
        self.log: list[str] = []
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)

    def tracebacks(self) -> int:
        return sum("Traceback" in line for line in list(self.log))

    def next_note(self, deadline: float) -> dict[str, str] | None:
        """The next notification that is no watchdog ping or status line alone (None: none before the deadline)."""
        while (left := deadline - time.monotonic()) > 0:
            try:
                note = self.notes.get(timeout=left)
            except queue.Empty:
                return None
            if {"RELOADING", "READY", "STOPPING"} & set(note):
                return note
        return None

    def next_outcome(self, deadline: float) -> dict[str, Any] | None:
        """The next `reload` or `error` event."""
        while (left := deadline - time.monotonic()) > 0:
            try:
                event = self.events.get(timeout=left)
            except queue.Empty:
                return None
            if event["type"] in ("reload", "error"):
                return event
        return None

    def drain(self) -> None:
        time.sleep(1.0)
        for q in (self.notes, self.events):
            while True:
                try:
                    q.get_nowait()
                except queue.Empty:
                    break


async def _ask(address: str) -> str:
    client = await Client.connect(address)
    try:
        return await asyncio.wait_for(client.ask("what time is it", "en"), ASK_S)
    finally:
        client.bus.disconnect()


def _defaults() -> dict[Key, Any]:
    return {**FIXED, **{k: getattr(getattr(Config(), k[0]), k[1]) for k in LIVE_VALUES}}


class Run:
    """The daemon under reloads: what is in effect (`values`), the counts, and what went wrong."""

    def __init__(self, d: Watched, path: Path, rng: random.Random) -> None:
        self.d = d
        self.path = path
        self.rng = rng
        self.values = _defaults()
        self.counts: Counter[str] = Counter()
        self.problems: list[str] = []
        self.languages = iter(["ru", "hi", "en"] * 1000)
        self.reply = ""  # the last answer to the request

    def _place(self, bad: Bad | None, values: dict[Key, Any]) -> bool:
        """Put the config (valid, or `bad` over `values`) where the daemon reads it; False: cannot be made here."""
        folder = self.path.parent
        if folder.is_dir():
            folder.chmod(0o755)
            shutil.rmtree(folder)
        elif folder.exists() or folder.is_symlink():
            folder.unlink()
        folder.mkdir()
        if bad is not None and bad.path is not None:
            return bad.path(self.path)
        self.path.write_bytes(render(values, bad))
        return True

    def _reload(self, what: str) -> tuple[dict[str, str] | None, dict[str, Any] | None]:
        """SIGHUP; the READY that ends the reload, and its `reload` or `error` event (None: a problem, noted)."""
        self.d.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + RELOAD_S
        first = self.d.next_note(deadline)
        ready = self.d.next_note(deadline) if first is not None and "RELOADING" in first else None
        outcome = self.d.next_outcome(deadline)
        if self.d.proc.poll() is not None:
            self.problem(f"{what}: the daemon exited ({self.d.proc.returncode})")
        elif first is None or ready is None or outcome is None:
            self.counts["hangs"] += 1
            self.problem(f"{what}: within {RELOAD_S:.0f} s: {first=}, {ready=}, {outcome=}")
            self.d.drain()
        elif "RELOADING" not in first or ready.get("READY") != "1":
            self.problem(f"{what}: systemd heard {first} then {ready}, not RELOADING=1 then READY=1")
        elif any("\0" in value for value in ready.values()):  # systemd ignores the whole message
            self.problem(f"{what}: a NUL byte in the READY=1 notification: {ready}")
        else:
            return ready, outcome
        return None, None

    def problem(self, text: str) -> None:
        self.problems.append(text[:600])

    def bad(self, group: str, bad: Bad) -> None:
        key = self.rng.choice(list(LIVE_VALUES))  # the decoy: a setting a reload would apply live
        decoy = {**self.values, key: self.rng.choice([v for v in LIVE_VALUES[key] if v != self.values[key]])}
        what = f"{group}: {bad.what[:120]}"
        if not self._place(bad, decoy):
            self.counts["skipped"] += 1
            return
        self.counts["bad"] += 1
        ready, outcome = self._reload(what)
        if ready is None or outcome is None:
            return
        if outcome["type"] != "error" or outcome.get("code") != "config-invalid":
            self.problem(f"{what}: not rejected: {json.dumps(outcome)[:300]}")
        elif "rejected" not in ready.get("STATUS", ""):
            self.problem(f"{what}: READY without a STATUS that says so: {ready}")
        else:
            self.counts["rejected"] += 1

    def valid(self) -> None:
        new = dict(self.values)
        new[("general", "language")] = next(self.languages)
        for key in self.rng.sample([k for k in LIVE_VALUES if k[0] != "general"], self.rng.randint(1, 2)):
            new[key] = self.rng.choice([v for v in LIVE_VALUES[key] if v != self.values[key]])
        changed = sorted((k for k in new if new[k] != self.values[k]), key=ORDER.__getitem__)
        self._place(None, new)
        self.counts["valid"] += 1
        ready, outcome = self._reload(f"valid change of {changed}")
        if ready is None or outcome is None:
            return
        want = {"type": "reload", "changed": [".".join(k) for k in changed], "restart": [],
                "language": new[("general", "language")]}
        got = {k: outcome.get(k) for k in want}
        if got != want:
            self.problem(f"a valid change was not applied as written (a bad file before it was?): {got} != {want}")
        elif "rejected" in ready.get("STATUS", ""):
            self.problem(f"a valid reload said it was rejected: {ready}")
        else:
            self.counts["applied"] += 1
        self.values = new  # what is in effect now (as far as it went through)

    def stop(self) -> int | None:
        """SIGTERM: STOPPING=1, then the exit status (None: it did not end within STOP_S, a problem)."""
        self.d.proc.send_signal(signal.SIGTERM)
        if self.d.next_note(time.monotonic() + STOP_S) != {"STOPPING": "1"}:
            self.problem("SIGTERM: no STOPPING=1")
        try:
            code = self.d.proc.wait(STOP_S)
        except subprocess.TimeoutExpired:
            self.problem(f"SIGTERM: still running after {STOP_S:.0f} s")
            return None
        time.sleep(0.2)  # the last of its log
        return code

    def request(self, address: str, group: str) -> None:
        try:
            reply = asyncio.run(_ask(address))
        except Exception as e:  # noqa: BLE001 - reported with the counts
            self.problem(f"after {group}: the request failed: {type(e).__name__}: {e}")
            return
        if not reply or reply == phrase("en", "error.internal") or not re.search(r"\d", reply):
            self.problem(f"after {group}: the request was not answered with the time: {reply!r}")
        else:
            self.counts["answered"] += 1
            self.reply = reply


def test_hostile_config_reloads_are_rejected_and_the_daemon_keeps_serving(tmp_path: Path, dbus_address: str) -> None:
    started = time.monotonic()
    rng = random.Random(SEED)
    groups = [(group, make(rng)) for group, make in GROUPS]
    path = tmp_path / "conf.d" / "hearthd.toml"
    path.parent.mkdir()
    path.write_bytes(render(_defaults()))
    env = {"HEARTHD__DBUS__ENABLED": "true", "DBUS_SESSION_BUS_ADDRESS": dbus_address,
           "DBUS_SYSTEM_BUS_ADDRESS": dbus_address}
    d = Watched(tmp_path, path, env)
    run = Run(d, path, rng)
    inputs: dict[str, int] = {}
    code: int | None = None
    try:
        assert d.note("READY", timeout=90)["READY"] == "1"
        assert d.event("ready", timeout=30)["service"] == "org.hearthd.Assistant1"  # D-Bus is up
        run.request(dbus_address, "start-up")
        n = 0
        for group, bads in groups:
            inputs[group] = len(bads)
            for bad in bads:
                run.bad(group, bad)
                n += 1
                if n % VALID_EVERY == 0:
                    run.valid()
                if len(run.problems) >= MAX_PROBLEMS or d.proc.poll() is not None or run.counts["hangs"] >= 3:
                    break
            else:
                run.valid()  # the group's last word is a valid file: nothing of it stayed behind
                run.request(dbus_address, group)
                continue
            break
        code = run.stop()
    finally:
        d.close()
    c = run.counts
    report = {"suite": "reload-hostile", "seed": SEED, "inputs": inputs, "bad": c["bad"], "rejected": c["rejected"],
              "skipped": c["skipped"], "valid_reloads": c["valid"], "applied": c["applied"],
              "requests_answered": c["answered"], "last_reply": run.reply, "tracebacks": d.tracebacks(),
              "hangs": c["hangs"], "problems": len(run.problems), "exit": code,
              "runtime_s": round(time.monotonic() - started, 1)}
    print("\n" + json.dumps(report), file=sys.stdout)
    assert run.problems == [], "\n".join(run.problems)
    assert sum(inputs.values()) >= 200 and len(inputs) == len(GROUPS)
    assert c["bad"] + c["skipped"] == sum(inputs.values()) and c["rejected"] == c["bad"]
    assert c["applied"] == c["valid"] >= len(GROUPS) and c["answered"] == len(GROUPS) + 1
    assert report["tracebacks"] == 0 and c["hangs"] == 0, "".join(d.log)[-3000:]
    assert code == 0
