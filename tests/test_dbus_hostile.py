"""A hostile run on hearthd's D-Bus door (issue 26): `hearthd run --headless --json` as its own process on a private
bus, then 1,000+ generated inputs (fixed seed) in groups, each group followed by a normal Ask ("what time is it", from
a program that has not spoken yet) that must be answered within ANSWER_S while the process is still alive:

- wrong signatures and argument types to Ask/Say/Mute/Listen; unknown methods, interfaces and paths; property Set on
  the read-only properties, Get of unknown ones; introspection, Peer and ObjectManager calls;
- huge texts (hundreds of kB) and odd `lang` values (empty, "xx", "EN", 10 kB of junk); empty, blank and
  control-only texts; texts with odd Unicode (bidi marks, combining runs, zero-width, emoji, mixed scripts);
- Mute toggles from several programs at once; fire-and-forget calls (NO_REPLY_EXPECTED) of every kind; replies and
  signals nobody asked for; bursts of concurrent Asks from many separate connections (senders); programs that leave
  in the middle of their own Ask; and other programs' "yes" to one program's "cancel all my alarms" (nothing may be
  cancelled until the asker itself says yes, read in the alarm store).

Every call must end in its expected answer or a D-Bus error that says why (counted as rejected), never in an
org.hearthd "Failed" error, an apology for an internal error, or no reply at all (a hang). At the end the daemon's
stderr holds no traceback, it exits 0 on SIGTERM, and no audit record is lost: every Ask that was answered (and every
one whose asker left before the answer) has its record in audit.jsonl, under the asker's own conversation (a text
with no letter or digit, refused before it is read as a request: a record of that text), and no record says `lost`.
The counts are printed per group and as one JSON line (`pytest -s`).

Most Asks are sentences the fast path answers; a few odd ones reach the model (model_turns in the report)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import sqlite3
import string
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dbus_fast import Message, MessageFlag, MessageType, Variant
from dbus_fast.aio import MessageBus

from hearthd.config import Config
from hearthd.daemon.pipeline import clean_text
from hearthd.daemon.service import ERROR_LANGUAGE, ERROR_TEXT, ERROR_UNAVAILABLE, NAME, PATH, conversation_of
from hearthd.locale import phrase

from . import test_hostile as hostile

ROOT = Path(__file__).resolve().parent.parent
SEED = 26
ANSWER_S = 30.0  # a call with no reply within this is a hang
PARALLEL = 8  # programs of their own asking at once (the unicode group)
POOL = 8  # the shared connections (programs that send many calls each, one at a time)
# A language of this many BEL characters: its repr() in an error that repeated it whole was over D-Bus's 128 MiB limit
# for one message, so no reply could be sent at all (and the daemon logged a 136 MB traceback)
AMPLIFIED = 2**25 + 2**20
LANGS = ("en", "ru", "hi")
PROPS = "org.freedesktop.DBus.Properties"
DBUS_ERROR = "org.freedesktop.DBus.Error."
REFUSALS = {DBUS_ERROR + name for name in ("UnknownMethod", "UnknownObject", "UnknownInterface", "UnknownProperty",
                                           "PropertyReadOnly", "InvalidArgs", "InvalidSignature", "NotSupported")} \
    | {ERROR_TEXT, ERROR_LANGUAGE, ERROR_UNAVAILABLE}  # what a refused call may say; anything else is a failure
APOLOGIES = {phrase(lang, "error.internal") for lang in LANGS}
SIGNATURES = {"Ask": "ss", "Say": "ss", "Mute": "b", "Listen": ""}

# Sentences the fast path answers without the model (no question left open but "cancel all my alarms").
FAST = {"en": ["what time is it", "set a timer for 10 minutes", "set an alarm for 6 am", "what's the date today",
               "what alarms do I have", "stop", "cancel all my alarms"],
        "ru": ["который час", "сколько времени", "поставь таймер на 10 минут", "разбуди меня в 6 утра"],
        "hi": ["कितने बजे हैं", "समय क्या है", "10 मिनट का टाइमर लगाओ", "अलार्म सुबह 6 बजे लगाओ"]}
ALL_FAST = [text for texts in FAST.values() for text in texts]
# Odd texts that reach the model (a turn of 1-5 s each on 2 cores), or, with no letter or digit, are refused before
# it: only a few are drawn.
MODEL_TEXTS = ["😀🎉🙃" * 5, "\u200b\u200c\u200d\u2060", "e\u0301" * 300, "ｗｈａｔ ｔｉｍｅ ｉｓ ｉｔ",
               "what time is it сейчас", "ما هي الساعة الآن", "Z\u0351\u0307\u0334a\u0315\u0332l\u0308\u0318g\u0300o",
               "\u202eti si emit tahw", "今何時ですか", "🇬🇧🇷🇺🇮🇳 👨\u200d👩\u200d👧", "\u2066what time is it\u2069"]
# What the templates still read through: other spaces, case, punctuation, control characters (dropped), and, before an
# otherwise plain sentence, a bidi or format mark. (Not Title Case, not a mark with any other change, not the bidi
# isolates U+2066-U+2069: with those a sentence reaches the model.)
DECORATED = [text for text in ALL_FAST if text != "अलार्म सुबह 6 बजे लगाओ"]  # (read by the tolerant tier)
MARKED = [text for text in DECORATED if text not in ("set an alarm for 6 am", "10 मिनट का टाइमर लगाओ")]
MARKS = ["\u202e", "\u200f", "\u200e", "\ufeff", "\u202b"]
PREFIXES = ["", "\u2028", "\x07", "\x1b", "\u00a0"]
SUFFIXES = ["", "?", "!", "?!", ".", "…", "\n", "\t", "\r\n", "\x1b", "\u3000"]
SPACES = [" ", "\u00a0", "  ", " \t", "\u2003", "\x07 "]
SAY_TEXTS = ["😀🎉", "\u202eمرحبا dinner", "dinner\u00a0is ready", "e\u0301" * 20, "Ω≈ç√∫ dinner",
             "ready\u2028now", "\u200b\u200bhello", "dinner 🍲 is ready"]
BLANKS = ["", " ", "\t", "\n", "\r\n", "\u3000", "\u00a0", "\u2003", "\u2028\u2029", "\x85", " \t\n\r\x0b\x0c"]
ODD_LANGS = ["xx", "EN", "En", "en ", " en", "en-US", "en_US", "e", "eng", "english", "ru\u200b", "\u202een",
             "\x07en", "🇬🇧", "de", "zh", "auto", "*", "..", "en\nru", "null", "\u0435n"]  # (the last: a Cyrillic е)
YES = {"en": ["yes", "Yes.", "yes please", "sure", "do it", "ok", "yeah", "confirm"], "ru": ["да", "Да."],
       "hi": ["हाँ"]}
NO = {"en": "no", "ru": "нет", "hi": "नहीं"}
CANCEL_ALL = {"en": "cancel all my alarms", "ru": "отмени все будильники", "hi": "सारे अलार्म रद्द कर दो"}
TYPES = ["s", "b", "i", "u", "y", "n", "q", "x", "t", "d", "o", "g", "v", "as", "ay", "ai", "a{sv}", "a{ss}", "(ss)",
         "(sb)", "aas"]


# -- the inputs ---------------------------------------------------------------------------------------------------


@dataclass
class Call:
    """One method call to hearthd's connection, and what must come back: "reply", "error" (any refusal), "any", or
    the name of the one error that must."""

    member: str
    signature: str = ""
    body: list[Any] | None = None
    interface: str | None = NAME
    path: str = PATH
    expect: str = "error"
    no_reply: bool = False  # sent NO_REPLY_EXPECTED: nothing comes back

    def message(self) -> Message:
        return Message(destination=NAME, path=self.path, interface=self.interface, member=self.member,
                       signature=self.signature, body=list(self.body or []),
                       flags=MessageFlag.NO_REPLY_EXPECTED if self.no_reply else MessageFlag.NONE)

    @property
    def asked(self) -> str | None:
        """The text of a well-formed Ask (a turn runs, and is audited), else None."""
        if self.member == "Ask" and self.signature == "ss" and self.interface in (NAME, None) and self.path == PATH:
            return str((self.body or ["", ""])[0])
        return None

    def __str__(self) -> str:
        body = json.dumps(self.body, default=repr, ensure_ascii=True)
        return f"{self.interface}.{self.member}({self.signature}) at {self.path}: {body[:120]}"


def _ident(rng: random.Random, n: int = 12) -> str:
    first = rng.choice(string.ascii_letters + "_")
    return first + "".join(rng.choice(string.ascii_letters + string.digits + "_") for _ in range(rng.randint(0, n)))


def _junk_text(rng: random.Random, n: int) -> str:
    """n characters of printable junk from several scripts (no NUL, no surrogate: D-Bus carries neither)."""
    pools = [string.printable, "абвгдежзийклмнопрстуфхцчшщыэюя", "अआइईउऊएऐओऔकखगघचछजझटठडढणतथदधनपफबभमयरलवशसह",
             "😀🎉🙃🍲🇬🇧", "\u0301\u0308\u200b\u202e\u200d", "漢字かなカナ"]
    pool = "".join(rng.sample(pools, rng.randint(1, len(pools))))
    return "".join(rng.choice(pool) for _ in range(n))


def _value(rng: random.Random, code: str) -> Any:
    """A value of the single complete D-Bus type `code`."""
    ints = {"y": (0, 255), "n": (-2**15, 2**15 - 1), "q": (0, 2**16 - 1), "i": (-2**31, 2**31 - 1),
            "u": (0, 2**32 - 1), "x": (-2**63, 2**63 - 1), "t": (0, 2**64 - 1)}
    if code in ints:
        low, high = ints[code]
        return rng.choice([low, high, 0, rng.randint(low, high)])
    if code == "s":
        return rng.choice(["", "what time is it", "en", "x" * rng.randint(1, 3000), _junk_text(rng, 40)])
    if code == "b":
        return rng.random() < 0.5
    if code == "d":
        return rng.choice([0.0, -1.5, 1e308, float("inf"), float("-inf"), float("nan")])
    if code == "o":
        return rng.choice(["/", PATH, "/x/y"])
    if code == "g":
        return rng.choice(["", "ss", "a{sv}"])
    if code == "v":
        return rng.choice([Variant("s", "yes"), Variant("b", True), Variant("i", -1), Variant("as", ["a", "b"])])
    if code == "as":
        return [_value(rng, "s") for _ in range(rng.randint(0, 3))]
    if code == "ay":
        return bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 64)))
    if code == "ai":
        return [_value(rng, "i") for _ in range(rng.randint(0, 5))]
    if code == "a{sv}":
        return {_ident(rng): _value(rng, "v") for _ in range(rng.randint(0, 3))}
    if code == "a{ss}":
        return {_ident(rng): _value(rng, "s") for _ in range(rng.randint(0, 3))}
    if code == "(ss)":
        return [_value(rng, "s"), _value(rng, "s")]
    if code == "(sb)":
        return [_value(rng, "s"), _value(rng, "b")]
    if code == "aas":
        return [[_value(rng, "s")] for _ in range(rng.randint(0, 2))]
    raise AssertionError(code)


def _typed(rng: random.Random, avoid: str) -> tuple[str, list[Any]]:
    """A signature of 0-4 complete types other than `avoid`, and a body for it."""
    while True:
        codes = [rng.choice(TYPES) for _ in range(rng.randint(0, 4))]
        if "".join(codes) != avoid:
            return "".join(codes), [_value(rng, code) for code in codes]


def wrong_signatures(rng: random.Random) -> Call:
    member = rng.choice(["Ask", "Ask", "Say", "Mute", "Mute", "Listen"])
    signature, body = _typed(rng, SIGNATURES[member])
    return Call(member, signature, body, interface=rng.choice([NAME, NAME, None]),
                expect=DBUS_ERROR + "UnknownMethod")


def unknown_names(rng: random.Random) -> Call:
    kind = rng.randrange(6)
    ask = ["what time is it", ""]
    if kind == 0:  # a method hearthd does not have (some of them names it does have, in the wrong case)
        member = rng.choice([_ident(rng, rng.choice([8, 60, 250])), "ask", "ASK", "Ask_", "AskX", "Transcript",
                             "Reply", "Action", "State", "Muted", "Language", "Unmute", "Stop", "Quit"])
        signature, body = _typed(rng, "-")
        return Call(member, signature, body, interface=rng.choice([NAME, None]))
    if kind == 1:  # an interface it does not have, with a method name it has
        interface = rng.choice(["org.hearthd.Assistant2", "org.hearthd.assistant1", "org.hearthd", "a.b",
                                ".".join(_ident(rng, 6) for _ in range(rng.randint(2, 6)))])
        return Call(rng.choice(["Ask", "Mute", "Listen", "Get"]), "ss", ask, interface=interface)
    if kind == 2:  # a path it does not serve
        path = rng.choice(["/", "/org", "/org/hearthd", PATH + "/x", PATH.lower(), "/org/hearthd/Assistant",
                           "/" + "/".join(_ident(rng, 8) for _ in range(rng.randint(1, 8)))])
        return Call("Ask", "ss", ask, path=path, interface=rng.choice([NAME, None]))
    if kind == 3:  # a standard interface with a method it does not have
        interface = rng.choice([PROPS, "org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Peer",
                                "org.freedesktop.DBus.ObjectManager", "org.freedesktop.DBus"])
        return Call(rng.choice(["Hello", "Ask", "RequestName", "GetX", _ident(rng)]), "", [], interface=interface)
    if kind == 4:  # hearthd's signal names, called as methods
        return Call(rng.choice(["Transcript", "Reply", "Action", "PropertiesChanged"]), "ss", ["x", "en"])
    return Call(_ident(rng, 30), "", [], interface=None, path=rng.choice([PATH, "/"]))


def properties(rng: random.Random) -> Call:
    kind = rng.randrange(7)
    prop = rng.choice(["State", "Language", "Muted"])
    if kind == 0:  # Set on a read-only property, any type
        code = rng.choice(["s", "b", "i", "as", "d", "v"])
        value = Variant(code, _value(rng, code)) if code != "v" else Variant("v", Variant("s", "idle"))
        return Call("Set", "ssv", [NAME, prop, value], interface=PROPS, expect=DBUS_ERROR + "PropertyReadOnly")
    if kind == 1:  # Get/Set of a property that is not there
        name = rng.choice(["state", "STATE", "Volume", "Wake", "State ", _ident(rng, 40), "Ask"])
        if rng.random() < 0.5:
            return Call("Get", "ss", [NAME, name], interface=PROPS, expect=DBUS_ERROR + "UnknownProperty")
        return Call("Set", "ssv", [NAME, name, Variant("s", "x")], interface=PROPS)
    if kind == 2:  # the right property of an interface that is not there
        interface = rng.choice(["org.x.Y", "org.hearthd.Assistant2", ".".join(_ident(rng, 6) for _ in range(3))])
        if rng.random() < 0.5:
            return Call("Get", "ss", [interface, prop], interface=PROPS)
        return Call("GetAll", "s", [interface], interface=PROPS)
    if kind == 3:  # the Properties methods with the wrong signature
        member = rng.choice(["Get", "Set", "GetAll"])
        signature, body = _typed(rng, {"Get": "ss", "Set": "ssv", "GetAll": "s"}[member])
        return Call(member, signature, body, interface=PROPS)
    if kind == 4:  # Get with no interface name: any interface that has it may answer
        return Call("Get", "ss", ["", prop], interface=PROPS, expect="any")
    if kind == 5:
        return Call("Get", "ss", [NAME, prop], interface=PROPS, expect="reply")
    return Call("GetAll", "s", [NAME], interface=PROPS, expect="reply")


def introspection(rng: random.Random) -> Call:
    kind = rng.randrange(5)
    path = rng.choice(["/", "/org", "/org/hearthd", PATH, PATH + "/x",
                       "/" + "/".join(_ident(rng, 8) for _ in range(rng.randint(1, 6)))])
    if kind == 0:
        return Call("Introspect", "", [], interface="org.freedesktop.DBus.Introspectable", path=path, expect="reply")
    if kind == 1:
        signature, body = _typed(rng, "")
        return Call("Introspect", signature, body, interface="org.freedesktop.DBus.Introspectable", path=path)
    if kind == 2:
        return Call("Ping", "", [], interface="org.freedesktop.DBus.Peer", path=path, expect="reply")
    if kind == 3:  # the machine id is read from a file a container may not have
        return Call("GetMachineId", "", [], interface="org.freedesktop.DBus.Peer", path=path, expect="any")
    return Call("GetManagedObjects", "", [], interface="org.freedesktop.DBus.ObjectManager", path=path, expect="any")


def huge(rng: random.Random, limit: int) -> Call:
    member = rng.choice(["Ask", "Ask", "Say"])
    kind = rng.randrange(4)
    if kind == 0:  # a huge text
        n = rng.randint(100_000, 600_000)
        text = rng.choice([("turn on the light " * (n // 18 + 1))[:n], "😀" * n, "e\u0301" * (n // 2),
                           _junk_text(rng, n)])
        return Call(member, "ss", [text, rng.choice(["", "en"])], expect=ERROR_TEXT)
    if kind == 1:  # a huge language
        return Call(member, "ss", [rng.choice(ALL_FAST), _junk_text(rng, 10_000)], expect=ERROR_LANGUAGE)
    if kind == 2:  # both: the language is read first
        return Call(member, "ss", ["x" * 300_000, "x" * rng.randint(1000, 50_000)], expect=ERROR_LANGUAGE)
    return Call(member, "ss", [_junk_text(rng, limit + rng.choice([1, 2, 1000])), ""], expect=ERROR_TEXT)


def blank(rng: random.Random) -> Call:
    text = "".join(rng.choice(BLANKS) for _ in range(rng.randint(0, 6)))
    if rng.random() < 0.4:  # control characters only (all but tab and the newlines are dropped)
        text += "".join(chr(rng.choice([c for c in range(1, 32) if c not in (9, 10, 13)]))
                        for _ in range(rng.randint(1, 20)))
    return Call(rng.choice(["Ask", "Ask", "Say"]), "ss", [text, rng.choice(["", "en", "ru", "hi"])], expect=ERROR_TEXT)


def odd_langs(rng: random.Random) -> Call:
    if rng.random() < 0.35:  # a language hearthd has, with a sentence in it: answered
        lang = rng.choice(["", "en", "ru", "hi"])
        return Call("Ask", "ss", [rng.choice(FAST[lang] if lang else ALL_FAST), lang], expect="reply")
    lang = rng.choice(ODD_LANGS + [_junk_text(rng, rng.choice([1, 3, 100, 10_000]))])
    if lang in ("en", "ru", "hi", ""):
        lang = "xx"
    return Call(rng.choice(["Ask", "Ask", "Say"]), "ss", [rng.choice(ALL_FAST), lang], expect=ERROR_LANGUAGE)


def _decorated(rng: random.Random) -> str:
    if rng.random() < 0.3:
        return rng.choice(MARKS) + rng.choice(MARKED)
    case = rng.choice([str, str, str.upper, str.capitalize])
    text = case(rng.choice(DECORATED))
    return rng.choice(PREFIXES) + rng.choice(SPACES).join(text.split(" ")) + rng.choice(SUFFIXES)


def mutes(rng: random.Random) -> Call:
    kind = rng.randrange(5)
    if kind <= 1:
        return Call("Mute", "b", [rng.random() < 0.5], expect="reply")
    if kind == 2:
        return Call("Get", "ss", [NAME, "Muted"], interface=PROPS, expect="reply")
    if kind == 3:  # headless: nothing to listen with, muted or not
        return Call("Listen", "", [], expect=ERROR_UNAVAILABLE)
    signature, body = _typed(rng, "b")
    return Call("Mute", signature, body, expect=DBUS_ERROR + "UnknownMethod")


def no_reply(rng: random.Random, limit: int) -> Call:
    """Any of the others, fire-and-forget (as `dbus-send` without --print-reply sends)."""
    make = rng.choice([wrong_signatures, unknown_names, properties, introspection, blank, odd_langs, mutes,
                       lambda r: huge(r, limit), lambda r: Call("Listen"),
                       lambda r: Call("Ask", "ss", [r.choice(ALL_FAST), ""], expect="reply")])
    call = make(rng)
    call.no_reply = True
    return call


def mixed(rng: random.Random, limit: int) -> Call:
    return rng.choice([wrong_signatures, unknown_names, properties, introspection, blank, odd_langs, mutes,
                       lambda r: huge(r, limit)])(rng)


# -- the daemon ---------------------------------------------------------------------------------------------------


class Daemon(hostile.Daemon):
    """`hearthd run --headless --json` in its own process (tests/test_hostile.py's runner, whose stop it keeps): its
    trace read as it comes and counted, its log (stderr) in a file."""

    def __init__(self, env: dict[str, str], log: Path, rings: Path) -> None:
        super().__init__(env, rings, log)
        self.kinds: Counter[str] = Counter()  # trace events by type
        self.errors: list[dict[str, Any]] = []
        self.ready: dict[str, Any] = {}
        self.model_texts: list[str] = []  # the texts of the turns that reached the model

    async def start(self, timeout: float = 90) -> dict[str, Any]:
        with self.log_path.open("ab") as log:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "hearthd", "run", "--headless", "--json", "--ring-output", str(self.rings),
                env=self.env, cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=log, limit=2**24)
        self._reader = asyncio.create_task(self._read())
        waiting = asyncio.create_task(self._ready.wait())
        await asyncio.wait([waiting, self._reader], timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()
        assert self._ready.is_set(), f"the daemon was not ready: {self.log_path.read_text(errors='replace')[-3000:]}"
        return self.ready

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        heard = ""
        async for line in self.proc.stdout:  # read to the end: a full pipe would stop the daemon's trace
            if line.startswith(b"{"):
                with contextlib.suppress(ValueError):
                    event = json.loads(line)
                    self.kinds[event.get("type", "")] += 1
                    if event.get("type") == "error":
                        self.errors.append(event)
                    elif event.get("type") == "transcript":
                        heard = str(event.get("text", ""))
                    elif event.get("type") == "model":
                        self.model_texts.append(heard)
                    if event.get("type") == "ready":
                        self.ready = event
                        self._ready.set()

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")


# -- the run ------------------------------------------------------------------------------------------------------


class Hostile:
    """The inputs, sent; what came back, counted."""

    def __init__(self, address: str, daemon: Daemon, state: Path, limit: int) -> None:
        self.address, self.daemon, self.state, self.limit = address, daemon, state, limit
        self.pool: list[MessageBus] = []
        self.outcomes: dict[str, Counter[str]] = {}  # by group: reply, rejected, sent, abandoned, hang
        self.errors: Counter[str] = Counter()  # the D-Bus errors by name
        self.unexpected: list[str] = []
        self.asked: Counter[tuple[str, str]] = Counter()  # (conversation, utterance) of every Ask answered
        self.left: Counter[tuple[str, str]] = Counter()  # ... of every Ask sent whose asker left before its answer
        self.checks: list[float] = []  # seconds the normal Ask after each group took

    async def __aenter__(self) -> Hostile:
        self.pool = [await MessageBus(bus_address=self.address).connect() for _ in range(POOL)]
        return self

    async def __aexit__(self, *exc: object) -> None:
        for bus in self.pool:
            bus.disconnect()

    @contextlib.asynccontextmanager
    async def fresh(self) -> AsyncIterator[MessageBus]:
        """A program that has not spoken yet: a connection (a sender, so a conversation) of its own."""
        bus = await MessageBus(bus_address=self.address).connect()
        try:
            yield bus
        finally:
            bus.disconnect()

    def _count(self, group: str, outcome: str) -> str:
        self.outcomes.setdefault(group, Counter())[outcome] += 1
        return outcome

    def _wrong(self, group: str, call: Call | str, what: str) -> None:
        self.unexpected.append(f"{group}: {call} -> {what[:300]}")

    async def send(self, group: str, bus: MessageBus, call: Call) -> str:
        """Send `call` from `bus`; "reply", "rejected" (a D-Bus error), "sent" (no reply was asked for) or "hang"."""
        if call.no_reply:  # from a program of its own: dbus-fast's writer breaks (EAGAIN) on a message sent right
            async with self.fresh() as own:  # after a large one, before the bus has read all of that
                await own.send(call.message())
                if call.asked is not None and call.expect == "reply":  # the turn runs: its record is due, unheard
                    self.left[(conversation_of(own.unique_name or ""), clean_text(call.asked, self.limit))] += 1
            return self._count(group, "sent")
        try:
            reply = await asyncio.wait_for(bus.call(call.message()), ANSWER_S)
        except TimeoutError:
            self._wrong(group, call, "hang")
            return self._count(group, "hang")
        assert reply is not None
        if reply.message_type == MessageType.ERROR:
            name = str(reply.error_name)
            self.errors[name] += 1
            if name not in REFUSALS or call.expect == "reply" or (call.expect.startswith("org.")
                                                                  and name != call.expect):
                self._wrong(group, call, f"{name}: {reply.body}")
            return self._count(group, "rejected")
        if call.expect not in ("reply", "any"):
            self._wrong(group, call, f"answered: {reply.body}")
        if call.asked is not None:
            answer = reply.body[0] if reply.body else None
            if not isinstance(answer, str) or not answer.strip() or answer in APOLOGIES:
                self._wrong(group, call, f"the answer {answer!r}")
            self.asked[(conversation_of(bus.unique_name or ""), clean_text(call.asked, self.limit))] += 1
        return self._count(group, "reply")

    async def send_all(self, group: str, calls: list[Call]) -> None:
        """Over the shared connections, one call in flight on each (dbus-fast's writer cannot take a second message
        while a large one is still half written: the connection breaks with EAGAIN)."""
        async def program(bus: MessageBus, calls: list[Call]) -> None:
            for call in calls:
                await self.send(group, bus, call)

        await asyncio.gather(*(program(bus, calls[i::POOL]) for i, bus in enumerate(self.pool)))
        for bus in self.pool:  # everything sent on them has been read (a bus delivers in order, sender to receiver)
            await self.send("sync", bus, Call("Ping", interface="org.freedesktop.DBus.Peer", expect="reply"))

    async def ask_fresh(self, group: str, text: str, lang: str = "") -> str:
        """`text` asked by a program of its own; its answer ("" when there was none)."""
        async with self.fresh() as bus:
            reply = await asyncio.wait_for(bus.call(Call("Ask", "ss", [text, lang]).message()), ANSWER_S)
            await self._count_ask(group, bus, text, reply)
        return str(reply.body[0]) if reply is not None and reply.message_type == MessageType.METHOD_RETURN else ""

    async def _count_ask(self, group: str, bus: MessageBus, text: str, reply: Message | None) -> None:
        if reply is None or reply.message_type != MessageType.METHOD_RETURN:
            self._wrong(group, f"Ask({text!r})", f"no answer: {reply and reply.error_name} {reply and reply.body}")
            self._count(group, "rejected")
            return
        if not reply.body or not str(reply.body[0]).strip() or reply.body[0] in APOLOGIES:
            self._wrong(group, f"Ask({text!r})", f"the answer {reply.body!r}")
        self.asked[(conversation_of(bus.unique_name or ""), clean_text(text, self.limit))] += 1
        self._count(group, "reply")

    async def check(self, group: str) -> None:
        """After each group: the daemon is alive and a normal request is answered within ANSWER_S."""
        assert self.daemon.alive, f"the daemon died in the {group} group: {self.daemon.log()[-3000:]}"
        started = time.monotonic()
        async with self.fresh() as bus:
            try:
                reply = await asyncio.wait_for(bus.call(Call("Ask", "ss", ["what time is it", ""]).message()),
                                               ANSWER_S)
            except TimeoutError:
                raise AssertionError(f"no answer to a normal Ask after the {group} group") from None
            assert reply is not None and reply.message_type == MessageType.METHOD_RETURN, (group, reply and reply.body)
            assert reply.body[0] and reply.body[0] not in APOLOGIES, (group, reply.body)
            self.asked[(conversation_of(bus.unique_name or ""), "what time is it")] += 1
        self.checks.append(time.monotonic() - started)

    # -- the scenarios ----------------------------------------------------------------------------------------

    async def unicode(self, group: str, rng: random.Random, n: int) -> None:
        """Odd Unicode around sentences the fast path answers, a few odd texts for the model, a few Says; each from a
        program of its own (no question left open by another input changes what this one is)."""
        calls = [Call("Ask", "ss", [_decorated(rng), ""], expect="reply")
                 for _ in range(n - 10)]
        calls += [Call("Ask", "ss", [text, ""], expect="reply") for text in rng.sample(MODEL_TEXTS, 4)]
        calls += [Call("Say", "ss", [text, rng.choice(["", "en"])], expect="reply")
                  for text in rng.sample(SAY_TEXTS, 6)]
        rng.shuffle(calls)

        async def one(call: Call) -> None:
            async with self.fresh() as bus:
                await self.send(group, bus, call)

        for start in range(0, len(calls), PARALLEL):
            await asyncio.gather(*(one(call) for call in calls[start:start + PARALLEL]))

    async def mute(self, group: str, rng: random.Random, n: int) -> None:
        """Mute toggles, reads of Muted and listening, from the shared programs at once; then unmuted, and read."""
        await self.send_all(group, [mutes(rng) for _ in range(n)])
        await self.send(group, self.pool[0], Call("Mute", "b", [False], expect="reply"))
        reply = await self.pool[1].call(Call("Get", "ss", [NAME, "Muted"], interface=PROPS).message())
        assert reply is not None and reply.body[0].value is False, reply and reply.body
        settings = json.loads((self.state / "hearthd" / "settings.json").read_text(encoding="utf-8"))
        assert settings["muted"] is False, settings

    async def burst(self, group: str, rng: random.Random, bursts: int, senders: int) -> None:
        """`senders` programs connect, then all ask at once (a few of them two things at once)."""
        for _ in range(bursts):
            plan = [[rng.choice(ALL_FAST) for _ in range(rng.choice([1, 1, 1, 2]))] for _ in range(senders)]
            buses = [await MessageBus(bus_address=self.address).connect() for _ in plan]
            try:
                await asyncio.gather(*(self.send(group, bus, Call("Ask", "ss", [text, ""], expect="reply"))
                                       for bus, texts in zip(buses, plan, strict=True) for text in texts))
            finally:
                for bus in buses:
                    bus.disconnect()

    async def leave(self, group: str, rng: random.Random, rounds: int, quitters: int) -> None:
        """A program asks something the model takes a while over and leaves in the middle of it; meanwhile others
        ask (their Asks wait for the turn) and leave before they are answered. The turns still run, and are audited;
        the answers go nowhere."""
        plan = [(rng.choice(MODEL_TEXTS), [rng.choice(ALL_FAST) for _ in range(quitters)], rng.uniform(0.2, 0.6))
                for _ in range(rounds)]
        for slow, texts, after in plan:
            first = await MessageBus(bus_address=self.address).connect()
            await first.send(Call("Ask", "ss", [slow, ""]).message())
            self.left[(conversation_of(first.unique_name or ""), clean_text(slow, self.limit))] += 1
            self._count(group, "abandoned")
            others = [await MessageBus(bus_address=self.address).connect() for _ in texts]
            for bus, text in zip(others, texts, strict=True):
                await bus.send(Call("Ask", "ss", [text, ""]).message())
                self.left[(conversation_of(bus.unique_name or ""), clean_text(text, self.limit))] += 1
                self._count(group, "abandoned")
                bus.disconnect()
            await asyncio.sleep(after)
            first.disconnect()

    def _alarms(self) -> tuple[int, int]:
        """(alarms still to ring, alarms cancelled), read in the daemon's store."""
        with contextlib.closing(sqlite3.connect(f"file:{self.state / 'hearthd' / 'alarms.db'}?mode=ro",
                                                uri=True)) as db:
            live = db.execute("SELECT count(*) FROM alarms WHERE kind = 'alarm' AND state IN ('pending', 'ringing')"
                              ).fetchone()[0]
            cancelled = db.execute("SELECT count(*) FROM alarms WHERE kind = 'alarm' AND state = 'cancelled'"
                                   ).fetchone()[0]
        return int(live), int(cancelled)

    async def cross(self, group: str, rng: random.Random, rounds: int) -> None:
        """A asks to cancel all alarms; B, C (other programs, some at once) say yes, or no: nothing is cancelled and
        A's question stays A's. A says no, and the next round begins; in the last, A says yes: now they go. Two
        alarms (the question says how many above policy.confirm_many = 2): those the other groups set go first."""
        async with self.fresh() as bus:  # "cancel all my alarms", then its own yes
            for text in ("cancel all my alarms", "yes"):
                await self._count_ask(group, bus, text, await asyncio.wait_for(
                    bus.call(Call("Ask", "ss", [text, ""]).message()), ANSWER_S))
        await self.ask_fresh(group, "set an alarm for 6 am")
        await self.ask_fresh(group, "set an alarm for 9:30 pm")
        live, cancelled = self._alarms()
        assert live >= 2, live
        listed = await self.ask_fresh(group, "what alarms do I have")
        plan = []
        for _ in range(rounds):
            lang = rng.choice(LANGS)
            others = [(rng.choice(YES[other]), other) for other in rng.choices(LANGS, k=rng.randint(1, 3))]
            if rng.random() < 0.3:
                others.append((NO[lang], lang))
            plan.append((lang, others))
        for i, (lang, others) in enumerate(plan):
            async with self.fresh() as a:
                asked = await asyncio.wait_for(a.call(Call("Ask", "ss", [CANCEL_ALL[lang], ""]).message()),
                                               ANSWER_S)
                await self._count_ask(group, a, CANCEL_ALL[lang], asked)
                if asked is None or asked.body != [phrase(lang, "confirm.cancel_all_alarms")]:
                    self._wrong(group, f"A: {CANCEL_ALL[lang]!r}", f"not the question: {asked and asked.body}")
                buses = [await MessageBus(bus_address=self.address).connect() for _ in others]
                try:
                    replies = await asyncio.gather(*(asyncio.wait_for(
                        bus.call(Call("Ask", "ss", [text, ""]).message()), ANSWER_S) for bus, (text, _) in
                        zip(buses, others, strict=True)))
                    for bus, (text, other), reply in zip(buses, others, replies, strict=True):
                        await self._count_ask(group, bus, text, reply)
                        if reply is None or reply.body != [phrase(other, "confirm.nothing_open")]:
                            self._wrong(group, f"B: {text!r}", f"answered another's question: {reply and reply.body}")
                finally:
                    for bus in buses:
                        bus.disconnect()
                if self._alarms() != (live, cancelled):
                    self._wrong(group, f"round {i}", f"alarms changed by another's answer: {self._alarms()}")
                last = i == len(plan) - 1
                answer = YES[lang][0] if last else NO[lang]
                reply = await asyncio.wait_for(a.call(Call("Ask", "ss", [answer, ""]).message()), ANSWER_S)
                await self._count_ask(group, a, answer, reply)
                if not last and (reply is None or reply.body != [phrase(lang, "confirm.cancelled")]):
                    self._wrong(group, f"A: {answer!r}", f"A's question was not A's: {reply and reply.body}")
            if not last and await self.ask_fresh(group, "what alarms do I have") != listed:
                self._wrong(group, f"round {i}", "the alarms are not what they were")
        if self._alarms() != (0, cancelled + live):
            self._wrong(group, "A: yes", f"A's own yes did not cancel the alarms: {self._alarms()}")

    async def unsolicited(self, group: str, rng: random.Random, n: int) -> None:
        """Replies nobody asked for, and signals, sent to hearthd's connection (the bus may refuse to pass the
        replies on; nothing comes back either way)."""
        bus = self.pool[0]
        owner = (await bus.call(Message(destination="org.freedesktop.DBus", path="/org/freedesktop/DBus",
                                        interface="org.freedesktop.DBus", member="GetNameOwner", signature="s",
                                        body=[NAME])))
        assert owner is not None and owner.message_type == MessageType.METHOD_RETURN, owner
        unique = str(owner.body[0])
        for _ in range(n):
            kind = rng.randrange(4)
            serial = rng.choice([1, 2, 3, rng.randint(1, 5000), 2**32 - 1])
            if kind == 0:
                message = Message(message_type=MessageType.METHOD_RETURN, destination=unique, reply_serial=serial,
                                  signature="s", body=[_junk_text(rng, 20)])
            elif kind == 1:
                message = Message(message_type=MessageType.ERROR, destination=unique, reply_serial=serial,
                                  error_name=rng.choice(["org.x.Error", DBUS_ERROR + "Failed", ERROR_TEXT]),
                                  signature="s", body=["x"])
            elif kind == 2:
                signature, body = _typed(rng, "-")
                message = Message(message_type=MessageType.SIGNAL, destination=unique, path=PATH, interface=NAME,
                                  member=rng.choice(["Transcript", "Reply", "Action", _ident(rng)]),
                                  signature=signature, body=body)
            else:
                message = Message.new_signal(PATH, rng.choice([NAME, PROPS]),
                                             rng.choice(["Reply", "PropertiesChanged"]), "ss", ["yes", "en"])
            await bus.send(message)
            self._count(group, "sent")
        await self.send("sync", bus, Call("Ping", interface="org.freedesktop.DBus.Peer", expect="reply"))


def _audit_records(state: Path) -> list[dict[str, Any]]:
    records = []
    for name in ["audit.jsonl"] + [f"audit.jsonl.{i}" for i in range(1, 10)]:
        path = state / "hearthd" / name
        if path.is_file():
            # split on newlines only, as hearthd's own reader does (str.splitlines would also split at the U+2028 or
            # U+0085 a record holds unescaped)
            records += [json.loads(line) for line in path.read_bytes().split(b"\n") if line.strip()]
    return records


def _unrecorded(due: Counter[tuple[str, str]], records: list[dict[str, Any]]) -> Counter[tuple[str, str]]:
    """The (conversation, text) of the turns in `due` that have no record: one of the asker's own conversation, or,
    for a text refused before it was heard as a request (no letter or digit), a record that names no conversation
    whose utterance is the text (its first 80 characters and "…" when longer)."""
    missing = due - Counter((str(r["conversation"]), str(r.get("utterance", ""))) for r in records
                            if "conversation" in r)
    anonymous = Counter(str(r.get("utterance", "")) for r in records if "conversation" not in r)
    left: Counter[tuple[str, str]] = Counter()
    for (conversation, text), n in missing.items():
        for _ in range(n):
            found = next((u for u in (text, text[:80] + "…") if anonymous[u] > 0), None)
            if found is None:
                left[(conversation, text)] += 1
            else:
                anonymous[found] -= 1
    return left


async def test_a_thousand_hostile_dbus_inputs_leave_the_door_answering(dbus_address: str, tmp_path: Path,
                                                                         base_config: Config) -> None:
    started = time.monotonic()
    rng = random.Random(SEED)
    state, config = tmp_path / "state", tmp_path / "config"
    (config / "hearthd").mkdir(parents=True)
    (config / "hearthd" / "config.toml").write_text("[mqtt]\nenabled = false\n")
    (tmp_path / "home").mkdir()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")  # the models, as set up
    env = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": dbus_address, "DBUS_SYSTEM_BUS_ADDRESS": dbus_address,
           "HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(config), "XDG_STATE_HOME": str(state),
           "XDG_CACHE_HOME": cache}
    limit = base_config.agent.max_text_chars
    daemon = Daemon(env, tmp_path / "daemon.log", tmp_path / "rings")
    assert (await daemon.start())["service"] == NAME

    def calls(make: Callable[[random.Random], Call], n: int) -> Callable[[Hostile, str], Awaitable[None]]:
        return lambda run, group: run.send_all(group, [make(rng) for _ in range(n)])

    groups: list[tuple[str, Callable[[Hostile, str], Awaitable[None]]]] = [
        ("signatures", calls(wrong_signatures, 120)),
        ("unknown", calls(unknown_names, 100)),
        ("properties", calls(properties, 80)),
        ("introspection", calls(introspection, 40)),
        ("huge", lambda run, group: run.send_all(group, [huge(rng, limit) for _ in range(40)] + [
            Call("Ask", "ss", ["what time is it", "\x07" * AMPLIFIED], expect=ERROR_LANGUAGE)])),
        ("blank", calls(blank, 50)),
        ("lang", calls(odd_langs, 60)),
        ("unicode", lambda run, group: run.unicode(group, rng, 90)),
        ("mute", lambda run, group: run.mute(group, rng, 60)),
        ("no-reply", calls(lambda r: no_reply(r, limit), 80)),
        ("unsolicited", lambda run, group: run.unsolicited(group, rng, 40)),
        ("burst", lambda run, group: run.burst(group, rng, 5, 24)),
        ("leave", lambda run, group: run.leave(group, rng, 2, 14)),
        ("cross-sender", lambda run, group: run.cross(group, rng, 10)),
        ("mixed", calls(lambda r: mixed(r, limit), 100)),
    ]
    try:
        async with Hostile(dbus_address, daemon, state, limit) as run:
            for name, group in groups:
                group_started = time.monotonic()
                await group(run, name)
                await run.check(name)
                got = run.outcomes[name]
                print(f"dbus hostile {name:<13} inputs {sum(got.values()):>4}  replies {got['reply']:>4}  rejected "
                      f"{got['rejected']:>4}  sent, no reply {got['sent'] + got['abandoned']:>3}  hangs {got['hang']}"
                      f"  ({time.monotonic() - group_started:.1f} s)")
                assert got["hang"] == 0, (name, run.unexpected)
    finally:
        alive = daemon.alive
        rc = await daemon.stop()

    log = daemon.log()
    records = _audit_records(state)
    missing = _unrecorded(run.asked + run.left, records)
    lost = sum(int(r.get("lost", 0)) for r in records) + sum(
        1 for e in daemon.errors if e.get("code") == "audit-not-recorded")
    totals: Counter[str] = Counter()
    for name, _ in groups:
        totals.update(run.outcomes[name])
    report = {
        "seed": SEED, "inputs": sum(totals.values()),
        "inputs_by_group": {name: sum(run.outcomes[name].values()) for name, _ in groups},
        "replies": totals["reply"], "rejected": totals["rejected"], "sent_without_reply": totals["sent"],
        "asker_left": totals["abandoned"], "errors": dict(run.errors.most_common()), "unexpected": len(run.unexpected),
        "tracebacks": log.count("Traceback"), "hangs": totals["hang"], "asks_answered": sum(run.asked.values()),
        "audit_records": len(records), "audit_missing": sum(missing.values()),
        "audit_unattributed": sum(1 for r in records if "conversation" not in r), "lost": lost,
        "model_turns": daemon.kinds["model"], "check_max_s": round(max(run.checks), 2), "alive": alive,
        "exit_code": rc, "runtime_s": round(time.monotonic() - started, 1)}
    details = {**report, "unexpected": run.unexpected, "audit_missing": [list(k) for k in missing],
               "model_texts": daemon.model_texts, "daemon_errors": daemon.errors}
    (tmp_path / "dbus-hostile.json").write_text(json.dumps(details, indent=2, ensure_ascii=False))
    print("dbus hostile run:", json.dumps(report, ensure_ascii=False))

    assert not run.unexpected, run.unexpected[:20]
    assert report["inputs"] >= 1000 and len(run.checks) == len(groups), report
    assert report["hangs"] == 0 and alive and rc == 0, report
    assert "SIGTERM: stopping" in log, "the daemon's log is not complete: the traceback count would mean nothing"
    assert report["tracebacks"] == 0, [block[:1500] for block in log.split("Traceback")[1:4]]
    assert not missing, f"answered Asks without an audit record: {list(missing.items())[:10]}"
    assert len(records) >= report["asks_answered"] and lost == 0, report
