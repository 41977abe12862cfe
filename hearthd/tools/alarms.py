"""Alarms and timers: set, list, cancel, time left — stored in SQLite so a restart or a crash loses nothing.

Every change is one committed transaction in a WAL-mode database under the XDG state dir
(`synchronous=FULL`: a SIGKILL or a power cut after the reply loses nothing that was confirmed). Times are
stored in UTC together with the zone the user meant, so a stored alarm means the same instant after a DST
change or a restart in another zone. `path=None` keeps the same SQLite database in memory (tests).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..context import turn_language, turn_origin
from ..locale import DEFAULT_LANGUAGE, read_with
from ..private import PrivateStore, StateWriteError, open_sqlite, reopen_writable, writing
from .registry import Tool, ToolResult

TIME_PATTERN = r"^([01][0-9]|2[0-3]):[0-5][0-9]$"
_TIME = {"type": "string", "pattern": TIME_PATTERN, "description": "24-hour time HH:MM", "x-ground": "time"}
REPEATS = ["daily", "weekdays", "weekends", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
           "sunday"]
_REPEAT = {"type": "string", "enum": REPEATS, "x-ground": "name", "description": "repeat the alarm"}
_DAY = {"type": "string", "enum": ["today", "tomorrow"], "x-ground": "name"}
_DATE = {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$", "x-ground": "date",
         "description": "a calendar date, YYYY-MM-DD"}
_LABEL = {"type": "string", "minLength": 1, "maxLength": 40, "x-ground": "words",
          "description": "what the alarm is for, in the user's words"}
# An alarm named by the part of the day it rings in ("cancel my morning alarm", "отмени утренний будильник", "सुबह
# वाला अलार्म": the words are locales/<lang>/clock.toml [day_parts]) when none is labelled so: the hours of that part,
# [from, to), wrapping past midnight for the night.
DAY_PARTS = {"morning": (4, 12), "afternoon": (12, 17), "evening": (17, 23), "night": (20, 5)}


def day_part(label: str) -> tuple[int, int] | None:
    """The hours of the part of the day `label` names in any language ("morning", "утренний", "शाम"), or None."""
    from .. import locale
    from ..text import fold

    said = fold(label.strip())
    for lang in locale.languages():
        for part, words in locale.table(lang, "clock.toml").get("day_parts", {}).items():
            if part in DAY_PARTS and said in {fold(w) for w in words}:
                return DAY_PARTS[part]
    return None

_RING_DAYS = {"daily": set(range(7)), "weekdays": set(range(5)), "weekends": {5, 6},
              **{d: {i} for i, d in enumerate(REPEATS[3:])}}
_SECONDS = {"type": "integer", "minimum": 1, "maximum": 86400, "x-ground": "duration",
            "description": "the duration in seconds"}
# A timer's name ("the pizza timer"): the same kind of value as an alarm's label, so it must be the user's words.
_TIMER_LABEL = {"type": "string", "minLength": 1, "maxLength": 40, "x-ground": "words",
                "description": "the timer's name"}
_DIRECTION = {"type": "string", "enum": ["add", "subtract"]}
_PAUSE = {"type": "string", "enum": ["pause", "resume"]}

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS alarms (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL DEFAULT 'alarm',      -- alarm | timer
    at_utc TEXT NOT NULL,                    -- when it rings, ISO 8601 in UTC
    zone TEXT NOT NULL,                      -- the zone the user meant (for saying the time back)
    label TEXT NOT NULL DEFAULT '',
    lang TEXT NOT NULL DEFAULT 'en',         -- the language it was set in (spoken when it rings)
    seconds INTEGER,                         -- timers: the duration asked for
    state TEXT NOT NULL DEFAULT 'pending',   -- pending | ringing | done | cancelled | missed | paused (timers)
    created_utc TEXT NOT NULL,
    repeat TEXT NOT NULL DEFAULT '',         -- '' (once) | daily | weekdays | weekends | monday … sunday
    wall TEXT NOT NULL DEFAULT '',           -- HH:MM on the wall clock, for the next occurrence of a repeat
    left_s INTEGER,                          -- a paused timer: the seconds it had left (at_utc means nothing then)
    origin TEXT NOT NULL DEFAULT '',         -- who set it: '' (this machine) or a satellite's name (it rings there)
    skip TEXT NOT NULL DEFAULT ''            -- a repeat's one day off (YYYY-MM-DD: "no alarm tomorrow"), or ''
);
CREATE INDEX IF NOT EXISTS alarms_due ON alarms (state, at_utc);
"""


@dataclass
class Alarm:
    """One alarm or timer, ringing once at `at` (zone-aware, in the zone it was set in)."""

    id: int
    at: datetime
    label: str = ""
    kind: str = "alarm"
    lang: str = DEFAULT_LANGUAGE
    seconds: int | None = None
    state: str = "pending"
    repeat: str = ""
    left: int | None = None  # a paused timer: seconds left
    origin: str = ""  # who set it: "" (this machine) or the satellite it was set from (daemon/satellites.py)
    skip: str = ""  # a repeating alarm's one day off, YYYY-MM-DD ("no alarm tomorrow"), or ""

    @property
    def hhmm(self) -> str:
        return self.at.strftime("%H:%M")

    def to_dict(self) -> dict[str, Any]:
        out = {"id": self.id, "kind": self.kind, "time": self.hhmm, "at": self.at.isoformat(), "label": self.label,
               "lang": self.lang, "state": self.state}
        if self.seconds is not None:
            out["seconds"] = self.seconds
        if self.repeat:
            out["repeat"] = self.repeat
        if self.left is not None:
            out["left_s"] = self.left
        if self.skip:
            out["skip"] = self.skip
        return out


def _one_day(args: dict[str, Any]) -> str:
    """The one day a call names: "today", "tomorrow", a date (YYYY-MM-DD), or "" for none."""
    if args.get("day") in ("today", "tomorrow"):
        return str(args["day"])
    return args["date"] if isinstance(args.get("date"), str) else ""


def spoken_time(hhmm: str) -> str:
    """07:30 → 7:30: how a time is written for the voices to read."""
    hours, minutes = hhmm.split(":")
    return f"{int(hours)}:{minutes}"


def local_zone(name: str = "") -> tzinfo:
    """The configured IANA zone, else the system's (TZ, /etc/localtime), else a fixed offset. A real zone
    matters: "every day at 7" must stay 7:00 on the wall clock across a DST change."""
    import os

    candidates = [name, os.environ.get("TZ", "").lstrip(":")]
    try:
        link = os.readlink("/etc/localtime")
        candidates.append(link.split("zoneinfo/", 1)[1] if "zoneinfo/" in link else "")
    except OSError:
        pass
    for candidate in candidates:
        if candidate:
            try:
                return ZoneInfo(candidate)
            except (ZoneInfoNotFoundError, ValueError):
                continue
    return datetime.now().astimezone().tzinfo or UTC


def _name_words(text: str) -> list[str]:
    """A name's words folded the way speech-to-text varies them: case, ё/е, Hindi nukta and chandrabindu."""
    from ..numbers import words_of
    from ..text import fold

    return [w.strip(".,!?;:'\"«»()") for w in words_of(fold(text)) if w.strip(".,!?;:'\"«»()")]


def _same_word(a: str, b: str) -> bool:
    """Equal, or one stem with another ending (пицца / пиццы, pizzas / pizza): a shared start of at least four
    letters and all but the last two of the shorter word."""
    stem = max(4, min(len(a), len(b)) - 2)
    return a == b or (len(a) >= stem and len(b) >= stem and a[:stem] == b[:stem])


_DIGRAPHS = (("ch", "\u00e7"), ("sh", "s"), ("kh", "k"), ("gh", "g"), ("th", "t"), ("dh", "d"), ("ph", "p"),
             ("bh", "b"), ("jh", "j"), ("c", "k"), ("\u00e7", "c"), ("z", "j"), ("f", "p"), ("w", "v"), ("q", "k"),
             ("x", "ks"))


def _skeleton(word: str) -> str:
    """A word's consonants, the same for its Devanagari and its Latin spelling ("पिज्जा" and "pizza": "pj", "चाय" and
    "chai": "c"): Hindi names reach hearthd in either script, as Whisper happens to write them. Devanagari letters are
    read by their Unicode names (LETTER PA, LETTER TTA), so the only table here is how Latin spells sounds."""
    import unicodedata

    latin = []
    for ch in word:
        name = unicodedata.name(ch, "")
        if name.startswith("DEVANAGARI LETTER "):
            letter = name.removeprefix("DEVANAGARI LETTER ").lower()
            if not set(letter) <= set("aeiou"):
                letter = letter[:-1] if letter.endswith("a") else letter  # PA → p, TTA → tt, KHA → kh
                latin.append("ch" if letter == "c" else letter)
        elif name == "DEVANAGARI SIGN ANUSVARA":
            latin.append("n")
        elif ch.isascii() and ch.isalpha():
            latin.append(ch)
    text = "".join(latin)
    for spelled, sound in _DIGRAPHS:
        text = text.replace(spelled, sound)
    out = ""
    for ch in text:
        if ch not in "aeiouyh" and not out.endswith(ch):
            out += ch
    return out


def _devanagari(word: str) -> bool:
    return any("\u0900" <= ch <= "\u097f" for ch in word)


def _same_name_word(a: str, b: str) -> bool:
    if _same_word(a, b):
        return True
    return _devanagari(a) != _devanagari(b) and a.isascii() != b.isascii() and _skeleton(a) == _skeleton(b) != ""


def same_name(said: str, name: str) -> bool:
    """Whether `said` names the timer called `name`: every word of the shorter is a word of the other ("pizza"
    and "pizza timer", "пиццы" and "пицца", "pizza" and "पिज़्ज़ा")."""
    a, b = _name_words(said), _name_words(name)
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    return bool(short) and all(any(_same_name_word(w, v) for v in long) for w in short)


def timer_label(label: str) -> str:
    """A timer's name without the words around it that are not one ("the", "my", "hey": timer.not_names in the
    turn's language and in English): "cancel the timer" read as the name "the" is no name."""
    from ..locale import phrases

    fillers: set[str] = set()
    for lang in read_with(turn_language.get()):
        fillers.update(_name_words(phrases(lang).get("timer.not_names", "").replace(",", " ")))
    words = label.split()
    while words and set(_name_words(words[0])) <= fillers:
        words.pop(0)
    while words and set(_name_words(words[-1])) <= fillers:
        words.pop()
    return " ".join(words).strip(" .,!?;:'\"«»")


class AlarmBook:
    """Alarms and timers in SQLite; `now` is injected so tests control the clock (and its zone)."""

    def __init__(self, now: Callable[[], datetime] | None = None, path: Path | None = None,
                 snooze_minutes: int = 9, zone: str = "") -> None:
        tz = local_zone(zone)
        self._now = now or (lambda: datetime.now(tz))
        self.snooze_minutes = snooze_minutes
        self.path = path
        self.store = PrivateStore()  # a corrupt alarms.db moved aside, or an empty one: what was found on open
        # the user's alarms: a 0700 directory, the database (and its -wal/-shm) 0600
        self._db = open_sqlite(path, self._setup, self.store)
        self._lock = threading.Lock()
        self._unsaved: list[tuple[str, tuple[Any, ...]]] = []  # changes made in memory while the disk took none
        self._in_memory = False

    def _setup(self, db: sqlite3.Connection) -> None:
        if self.path is not None:
            db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.executescript(SCHEMA)
        have = {row[1] for row in db.execute("PRAGMA table_info(alarms)")}
        for column in ("repeat", "wall"):  # a store written before recurrence existed
            if column not in have:
                db.execute(f"ALTER TABLE alarms ADD COLUMN {column} TEXT NOT NULL DEFAULT ''")
        if "left_s" not in have:  # a store written before timers could be paused
            db.execute("ALTER TABLE alarms ADD COLUMN left_s INTEGER")
        if "origin" not in have:  # a store written before satellites: every alarm in it was set here
            db.execute("ALTER TABLE alarms ADD COLUMN origin TEXT NOT NULL DEFAULT ''")
        if "skip" not in have:  # a store written before a repeat could take a day off
            db.execute("ALTER TABLE alarms ADD COLUMN skip TEXT NOT NULL DEFAULT ''")

    def close(self) -> None:
        self._db.close()

    def _zone(self) -> str:
        tz = self._now().tzinfo
        return str(getattr(tz, "key", None) or self._now().tzname() or "UTC")

    def _row(self, row: tuple[Any, ...]) -> Alarm:
        id_, kind, at_utc, _zone, label, lang, seconds, state, repeat, left, origin, skip = row
        at = datetime.fromisoformat(at_utc).astimezone(self._now().tzinfo)
        return Alarm(id_, at, label, kind, lang, seconds, state, repeat, left, origin or "", skip or "")

    def _select(self, where: str, params: tuple[Any, ...] = ()) -> list[Alarm]:
        with self._lock:
            rows = self._db.execute(
                "SELECT id, kind, at_utc, zone, label, lang, seconds, state, repeat, left_s, origin, skip FROM alarms "
                "WHERE " + where + " ORDER BY at_utc, id", params).fetchall()
        return [self._row(r) for r in rows]

    def _write(self, sql: str, params: tuple[Any, ...], durable: bool = True) -> sqlite3.Cursor:
        """One committed change. On a full or read-only disk a `durable` one (what the user asked to set or cancel)
        raises StateWriteError; what is stored stays readable. A change that is not (an alarm ringing, stopped,
        snoozed: it must happen whether or not it can be saved) is made in a copy of the store in memory, kept to
        be saved once the disk takes writes again. Before each change a store that could not be written is tried
        again: the disk may have room by now."""
        with self._lock:
            if self.store.read_only is not None and (db := reopen_writable(self.path, self._setup, self.store)):
                try:
                    with writing(self.path, self.store):
                        for unsaved in self._unsaved:  # what happened meanwhile (ringing, stopped) is saved first
                            db.execute(*unsaved)
                except StateWriteError as e:  # it opens, but still takes no writes: stay as we were
                    self.store.retired.append(db)
                    self.store.read_only = e
                else:
                    self.store.retired.append(self._db)
                    self._db, self._unsaved, self._in_memory = db, [], False
            problem = self.store.read_only
            if problem is None:
                try:
                    with writing(self.path, self.store):
                        return self._db.execute(sql, params)
                except StateWriteError as e:
                    if durable:
                        raise
                    self.store.read_only = problem = e
            if durable:
                raise problem
            if not self._in_memory:
                memory = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
                self._db.backup(memory)
                self.store.retired.append(self._db)
                self._db, self._in_memory = memory, True
            self._unsaved.append((sql, params))
            log.warning("%s: an alarm's state is kept in memory until it can be saved", problem.message)
            return self._db.execute(sql, params)

    def _insert(self, kind: str, at: datetime, label: str, seconds: int | None, repeat: str = "") -> Alarm:
        cur = self._write(
            "INSERT INTO alarms (kind, at_utc, zone, label, lang, seconds, created_utc, repeat, wall, origin) "
            "VALUES (?,?,?,?,?,?,?,?,?,?)",
            (kind, at.astimezone(UTC).isoformat(), self._zone(), label, turn_language.get(), seconds,
             datetime.now(UTC).isoformat(), repeat, at.strftime("%H:%M"), turn_origin.get()))
        id_ = int(cur.lastrowid or 0)
        return self._select("id = ?", (id_,))[0]

    def finish(self, alarm: Alarm) -> None:
        """Stopped, or rang itself out: a repeating alarm moves to its next day, a one-off is done."""
        if not alarm.repeat:
            self.set_state(alarm, "done")
            return
        with self._lock:
            (wall,) = self._db.execute("SELECT wall FROM alarms WHERE id = ?", (alarm.id,)).fetchone()
        at = self.next_occurrence(wall, alarm.repeat)
        if alarm.skip and at.date().isoformat() == alarm.skip:  # its day off: the ring after it
            at = self._after(wall, alarm.repeat, at.date())
        if alarm.skip and at.date().isoformat() > alarm.skip:  # the day off is behind it
            self._write("UPDATE alarms SET skip = '' WHERE id = ?", (alarm.id,), durable=False)
        self.set_state(alarm, "pending", at)

    def set_state(self, alarm: Alarm, state: str, at: datetime | None = None, durable: bool = False) -> None:
        """Ringing, stopped, snoozed, missed: done even when the disk takes no writes (kept in memory, saved when
        it can be); `durable` (a cancel the user asked for) fails instead, with StateWriteError."""
        if at is None:
            self._write("UPDATE alarms SET state = ? WHERE id = ?", (state, alarm.id), durable)
        else:
            self._write("UPDATE alarms SET state = ?, at_utc = ? WHERE id = ?",
                        (state, at.astimezone(UTC).isoformat(), alarm.id), durable)

    def next_occurrence(self, hhmm: str, repeat: str = "", day: str = "") -> datetime:
        """The next time the wall clock shows `hhmm` (on a day the repeat allows; `day="tomorrow"`: not today).
        Aware arithmetic on the IANA zone keeps the wall time across a DST change."""
        now = self._now()
        hours, minutes = (int(x) for x in hhmm.split(":"))
        at = now.replace(hour=hours, minute=minutes, second=0, microsecond=0)
        if day == "tomorrow":
            at += timedelta(days=1)
        days = _RING_DAYS.get(repeat, set(range(7)))
        while at <= now or at.weekday() not in days:
            at += timedelta(days=1)
        return at.replace(fold=0)

    def _after(self, hhmm: str, repeat: str, day: date) -> datetime:
        """The first time the wall clock shows `hhmm` after `day`, on a day the repeat allows."""
        hours, minutes = (int(x) for x in hhmm.split(":"))
        at = datetime(day.year, day.month, day.day, hours, minutes, tzinfo=self._now().tzinfo) + timedelta(days=1)
        days = _RING_DAYS.get(repeat, set(range(7)))
        while at.weekday() not in days:
            at += timedelta(days=1)
        return at.replace(fold=0)

    def day_of(self, day: str) -> date:
        """The date `day` ("today", "tomorrow") names on the wall clock."""
        return self._now().date() + timedelta(days=1 if day == "tomorrow" else 0)

    def rings_on(self, alarm: Alarm, day: date) -> bool:
        """Whether `alarm` rings on `day`: its next ring, or for a repeat any later day it allows (not its day off)."""
        if alarm.at.date() == day:
            return True
        return bool(alarm.repeat) and alarm.at.date() < day and day.isoformat() != alarm.skip \
            and day.weekday() in _RING_DAYS.get(alarm.repeat, set())

    def take_day_off(self, alarm: Alarm, day: date) -> None:
        """`alarm` does not ring on `day`: a one-off is cancelled; a repeat keeps its days and skips this one (its
        next ring moved past it, or, when it rings before then, the day kept as its day off)."""
        if not alarm.repeat:
            self.remove(alarm)
        elif alarm.at.date() == day:
            with self._lock:
                (wall,) = self._db.execute("SELECT wall FROM alarms WHERE id = ?", (alarm.id,)).fetchone()
            self.set_state(alarm, "pending", self._after(wall or alarm.hhmm, alarm.repeat, day), durable=True)
        else:
            self._write("UPDATE alarms SET skip = ? WHERE id = ?", (day.isoformat(), alarm.id))

    def add(self, hhmm: str, label: str = "", repeat: str = "", day: str = "") -> Alarm:
        return self._insert("alarm", self.next_occurrence(hhmm, repeat, day), label, None, repeat)

    def add_timer(self, seconds: int, label: str = "") -> Alarm:
        return self._insert("timer", self._now() + timedelta(seconds=seconds), label, seconds)

    def pending(self, kind: str = "alarm") -> list[Alarm]:
        return self._select("state = 'pending' AND kind = ?", (kind,))

    def due(self) -> list[Alarm]:
        """Pending alarms and timers whose time has come."""
        return self._select("state = 'pending' AND at_utc <= ?", (self._now().astimezone(UTC).isoformat(),))

    def ringing(self) -> list[Alarm]:
        return self._select("state = 'ringing'")

    def remove(self, alarm: Alarm) -> None:
        self.set_state(alarm, "cancelled", durable=True)  # a cancel not saved would ring after a restart

    # -- tool handlers ------------------------------------------------------------------------------------

    async def set_alarm(self, args: dict[str, Any]) -> ToolResult:
        if "date" in args:  # "on December 5th at 7": that day, once
            hours, minutes = (int(x) for x in args["time"].split(":"))
            day = datetime.fromisoformat(args["date"]).date()
            at = datetime(day.year, day.month, day.day, hours, minutes, tzinfo=self._now().tzinfo)
            if at <= self._now():
                return ToolResult(False, {"date": args["date"], "time": args["time"]}, "alarm.past")
            alarm = self._insert("alarm", at, args.get("label", "").strip(), None)
            return ToolResult(True, alarm.to_dict(), "alarm.set_date",
                              {"time": spoken_time(alarm.hhmm), "label": alarm.label}, dates={"date": args["date"]})
        alarm = self.add(args["time"], args.get("label", "").strip(), args.get("repeat", ""), args.get("day", ""))
        values = {"time": spoken_time(alarm.hhmm), "label": alarm.label}
        if alarm.repeat:
            return ToolResult(True, alarm.to_dict(), f"alarm.set_{alarm.repeat}", values)
        key = "alarm.set_labeled" if alarm.label else "alarm.set_tomorrow" if args.get("day") == "tomorrow" \
            else "alarm.set"
        return ToolResult(True, alarm.to_dict(), key, values)

    def _at(self, alarms: list[Alarm], hhmm: str) -> list[Alarm]:
        """The alarms at `hhmm`; said without am/pm ("the two o'clock alarm", "do baje wala"), the ones at 14:00 when
        none is at 2:00."""
        matches = [a for a in alarms if a.hhmm == hhmm]
        hour, minute = (int(x) for x in hhmm.split(":"))
        if not matches and 1 <= hour <= 12:
            other = f"{(hour + 12) % 24:02d}:{minute:02d}"
            matches = [a for a in alarms if a.hhmm == other]
        return matches

    async def list_alarms(self, args: dict[str, Any]) -> ToolResult:
        alarms = self.pending()
        data = {"alarms": [a.to_dict() for a in alarms]}
        if "time" in args:  # "do I have an alarm for six tomorrow?": yes or no, from the alarms set
            found = self._at(alarms, str(args["time"]))
            tomorrow = args.get("day") == "tomorrow"
            if args.get("day"):
                day = self._now().date() + timedelta(days=1 if tomorrow else 0)
                # a repeating alarm rings on that day when the day is one of its days, whatever its next ring is
                found = [a for a in found if self.rings_on(a, day)]
            said = spoken_time(found[0].hhmm if found else str(args["time"]))
            key = ("alarm.at_yes" if found else "alarm.at_no") + ("_tomorrow" if tomorrow else "")
            return ToolResult(True, {**data, "found": [a.to_dict() for a in found]}, key, {"time": said})
        if _one_day(args):  # "is there an alarm tomorrow?", "what alarms do I have on Saturday?": that day's
            on_day = self._on_day(args)
            if isinstance(on_day, ToolResult):
                return ToolResult(True, data, on_day.phrase, on_day.values, dates=on_day.dates)
            alarms = on_day
            data = {"alarms": [a.to_dict() for a in alarms]}
        if not alarms:
            return ToolResult(True, data, "alarm.none")
        if len(alarms) == 1:
            return ToolResult(True, data, "alarm.list_one", {"time": spoken_time(alarms[0].hhmm)})
        times = ", ".join(spoken_time(a.hhmm) for a in alarms)
        return ToolResult(True, data, "alarm.list", {"count": len(alarms), "times": times},
                          counts={"alarms": (len(alarms), "alarm")})

    def _on_day(self, args: dict[str, Any]) -> list[Alarm] | ToolResult:
        """The pending alarms; with `day` or `date`, those that ring that day (or the answer that none does)."""
        alarms = self.pending()
        if day := _one_day(args):  # "no alarm tomorrow", "delete the alarm for Saturday": that day's rings
            on = self._date_of(day)
            alarms = [a for a in alarms if self.rings_on(a, on)]
            if not alarms:
                if day in ("today", "tomorrow"):
                    return ToolResult(False, {"day": day}, f"alarm.day_none_{day}")
                return ToolResult(False, {"date": day}, "alarm.day_none_date", dates={"date": day})
        return alarms

    def _date_of(self, day: str) -> date:
        """The date `day` names: "today", "tomorrow" (on the wall clock), or a date (YYYY-MM-DD)."""
        return self.day_of(day) if day in ("today", "tomorrow") else date.fromisoformat(day)

    def _days_off(self, alarms: list[Alarm], day: str) -> ToolResult:
        """`alarms` kept from ringing on `day` ("today", "tomorrow" or a date, YYYY-MM-DD: a one-off cancelled, a
        repeat skipping the day), said as that."""
        on = self._date_of(day)
        for alarm in alarms:
            self.take_day_off(alarm, on)
        data = {"day": day, "date": on.isoformat(), "cancelled": [a.to_dict() for a in alarms if not a.repeat],
                "skipped": [a.to_dict() for a in alarms if a.repeat]}
        repeat = "repeat_" if len(alarms) == 1 and alarms[0].repeat else ""
        named = day if day in ("today", "tomorrow") else "date"
        return ToolResult(True, data, f"alarm.day_off_{repeat}{named}",
                          {"times": ", ".join(spoken_time(a.hhmm) for a in alarms)},
                          counts={"alarms": (len(alarms), "alarm")},
                          dates={} if named != "date" else {"date": on.isoformat()})

    def _to_cancel(self, args: dict[str, Any]) -> list[Alarm] | ToolResult:
        """The alarms `cancel_alarm` would cancel, or the answer when it cancels none (not found, which one?)."""
        alarms = self._on_day(args)
        if isinstance(alarms, ToolResult):
            return alarms
        if "label" in args:
            wanted = str(args["label"]).strip().lower()
            matches = [a for a in alarms if a.label and (wanted in a.label.lower() or a.label.lower() in wanted)]
            if not matches and (hours := day_part(wanted)):  # "my morning alarm", none called so: the one ringing then
                start, end = hours
                matches = [a for a in alarms if (start <= int(a.hhmm[:2]) < end if start < end
                                                 else int(a.hhmm[:2]) >= start or int(a.hhmm[:2]) < end)]
            if "time" in args:
                matches = [a for a in matches if a.hhmm == args["time"]]
            if not matches:
                return ToolResult(False, {"label": args["label"]}, "alarm.label_not_found", {"label": args["label"]})
            return matches
        if "time" in args:
            matches = self._at(alarms, str(args["time"]))
            if not matches:
                return ToolResult(False, {"time": args["time"]}, "alarm.not_found",
                                  {"time": spoken_time(args["time"])})
            return matches
        if len(alarms) == 1:
            return alarms
        if not alarms:
            return ToolResult(False, {}, "alarm.none")
        return ToolResult(False, {"alarms": [a.to_dict() for a in alarms]}, "alarm.which")

    def cancel_count(self, args: dict[str, Any]) -> tuple[int, str]:
        """How many alarms `cancel_alarm` with these arguments would cancel (the policy asks first above a few)."""
        found = self._to_cancel(args)
        return (0 if isinstance(found, ToolResult) else len(found)), "alarm"

    def cancel_all_count(self, args: dict[str, Any]) -> tuple[int, str]:
        found = self._on_day(args)
        return (0 if isinstance(found, ToolResult) else len(found)), "alarm"

    async def cancel_alarm(self, args: dict[str, Any]) -> ToolResult:
        found = self._to_cancel(args)
        if isinstance(found, ToolResult):
            return found
        if day := _one_day(args):  # "no alarm tomorrow", "… for Saturday": that day's ring, not the repeat
            return self._days_off(found, day)
        for alarm in found:
            self.remove(alarm)
        data = {"cancelled": [a.to_dict() for a in found]}
        values = {"time": spoken_time(found[0].hhmm), "label": str(args.get("label", "")).strip()}
        if len(found) == 1:
            return ToolResult(True, data, "alarm.cancelled", values)
        # "cancel the 7:30 alarm" that finds several says how many it cancelled, never "the alarm"
        same_time = len({a.hhmm for a in found}) == 1
        return ToolResult(True, data, "alarm.cancelled_many" if same_time else "alarm.cancelled_many_labeled",
                          values, counts={"alarms": (len(found), "alarm")})

    async def move_alarm(self, args: dict[str, Any]) -> ToolResult:
        """"Move my 7 am alarm to 7:30", "перенеси будильник на полвосьмого": the alarm at `time` (or named by
        `label`, or the only one) rings at `new_time` instead, keeping its name and its days. A one-off keeps its day
        unless that time of it is past; several alarms that fit ask which. Before, the model set a second alarm and
        the first still rang."""
        if isinstance(args.get("id"), int):  # the alarm just set, corrected ("actually, make it 8")
            found = [a for a in self.pending() if a.id == args["id"]] or ToolResult(
                False, {"time": args.get("time", "")}, "alarm.not_found", {"time": spoken_time(str(args.get("time")))})
        else:
            found = self._to_cancel({k: args[k] for k in ("time", "label", "day") if k in args})
        if isinstance(found, ToolResult):
            return ToolResult(False, found.data, "alarm.which_move") if found.phrase == "alarm.which" else found
        if len(found) > 1:
            return ToolResult(False, {"alarms": [a.to_dict() for a in found]}, "alarm.which_move")
        (alarm,) = found
        hours, minutes = (int(x) for x in str(args["new_time"]).split(":"))
        at = alarm.at.replace(hour=hours, minute=minutes, second=0, microsecond=0, fold=0)
        if alarm.repeat or at <= self._now():
            at = self.next_occurrence(args["new_time"], alarm.repeat)
        self._write("UPDATE alarms SET at_utc = ?, wall = ? WHERE id = ?",
                    (at.astimezone(UTC).isoformat(), at.strftime("%H:%M"), alarm.id))
        moved = self._select("id = ?", (alarm.id,))[0]
        return ToolResult(True, {"moved": alarm.to_dict(), "now": moved.to_dict()}, "alarm.moved",
                          {"time": spoken_time(alarm.hhmm), "new_time": spoken_time(moved.hhmm)})

    async def cancel_all_alarms(self, args: dict[str, Any]) -> ToolResult:
        alarms = self._on_day(args)
        if isinstance(alarms, ToolResult):
            return alarms
        if day := _one_day(args):  # "cancel all my alarms for tomorrow": that day's only
            return self._days_off(alarms, day)
        if not alarms:
            return ToolResult(True, {"cancelled": []}, "alarm.none")
        for alarm in alarms:
            self.remove(alarm)
        return ToolResult(True, {"cancelled": [a.to_dict() for a in alarms]}, "alarm.cancelled_all",
                          counts={"alarms": (len(alarms), "alarm")})

    # -- timers: several at once, by name, paused, changed ---------------------------------------------------

    def timers(self) -> list[Alarm]:
        """Running and paused timers, the one to end first first."""
        found = self._select("kind = 'timer' AND state IN ('pending', 'paused')")
        return sorted(found, key=lambda t: (self.left(t), t.id))

    def left(self, timer: Alarm) -> int:
        """Seconds a timer has left (a paused one: what it had when paused)."""
        if timer.state == "paused":
            return int(timer.left or 0)
        return max(1, round((timer.at - self._now()).total_seconds()))

    def _by_label(self, label: str, timers: list[Alarm]) -> list[Alarm]:
        """The timers a name said means: "pizza" is the pizza timer (пиццы/пицца, पिज़्ज़ा/पिज्जा alike); a timer
        without a name is known by the duration it was set for ("the 10 minute timer")."""
        matches = [t for t in timers if t.label and same_name(label, t.label)]
        if matches:
            return matches
        from ..numbers import parse_duration

        seconds = next((s for lang in read_with(turn_language.get()) if (s := parse_duration(label, lang))), None)
        return [t for t in timers if seconds and t.seconds == seconds]

    def _named(self, args: dict[str, Any], timers: list[Alarm]) -> list[Alarm] | ToolResult:
        """The timers a call's `label` names (all of them when it names none), or the answer when there are none."""
        label = timer_label(str(args.get("label", "")))
        if label and timers:  # no timer at all: "No timer is running", whatever name was said
            matches = self._by_label(label, timers)
            return matches or ToolResult(False, {"label": label}, "timer.not_found", {"label": label})
        return timers or ToolResult(False, {}, "timer.none")

    def _which(self, timers: list[Alarm]) -> ToolResult:
        """Several timers and the call meant one: the question says each one (name, time left)."""
        return ToolResult(False, {"timers": [t.to_dict() for t in timers]}, "timer.which",
                          {"items": self._items(timers)}, counts={"timers": (len(timers), "timer")})

    def _items(self, timers: list[Alarm]) -> str:
        """"pizza, 4 minutes left; tea, 30 seconds left" in the turn's language."""
        from ..locale import phrase
        from ..spoken import say_duration

        lang = turn_language.get()
        items = []
        for t in timers:
            key = "timer.item" + ("_named" if t.label else "") + ("_paused" if t.state == "paused" else "")
            items.append(phrase(lang, key, label=t.label, duration=say_duration(self.left(t), lang)))
        return phrase(lang, "timer.separator").join(items)

    def _one(self, key: str, timer: Alarm, ok: bool = True, **seconds: int) -> ToolResult:
        """A reply about one timer: `key`, or `key`_named when the timer has a name."""
        return ToolResult(ok, {**timer.to_dict(), "remaining_s": self.left(timer)},
                          f"timer.{key}_named" if timer.label else f"timer.{key}", {"label": timer.label},
                          durations=dict(seconds))

    async def set_timer(self, args: dict[str, Any]) -> ToolResult:
        timer = self.add_timer(int(args["seconds"]), timer_label(str(args.get("label", ""))))
        return ToolResult(True, timer.to_dict(), "timer.set_named" if timer.label else "timer.set",
                          {"label": timer.label}, durations={"duration": int(args["seconds"])})

    def _timers_to_cancel(self, args: dict[str, Any]) -> list[Alarm] | ToolResult:
        """The timers `cancel_timer` would cancel, or the answer when it cancels none (none running, which one?)."""
        timers = self.timers()
        if args.get("all"):
            return timers or ToolResult(False, {}, "timer.none")
        found = self._named(args, timers)
        if isinstance(found, ToolResult) or len(found) == 1 or timer_label(str(args.get("label", ""))):
            return found
        return self._which(found)

    def cancel_timer_count(self, args: dict[str, Any]) -> tuple[int, str]:
        """How many timers a named cancel would cancel (asked first above policy.confirm_many); "all" is not
        counted: cancelling every timer is not consequential unless the config says so (policy.confirm)."""
        if args.get("all"):
            return 0, "timer"
        found = self._timers_to_cancel(args)
        return (0 if isinstance(found, ToolResult) else len(found)), "timer"

    async def cancel_timer(self, args: dict[str, Any]) -> ToolResult:
        ringing = [a for a in self.ringing() if a.kind == "timer"]
        found = self._timers_to_cancel(args)
        if isinstance(found, ToolResult):
            if found.phrase == "timer.none" and ringing:  # "cancel the timer" while it rings: it is stopped
                for timer in ringing:
                    self.finish(timer)
                return ToolResult(True, {"stopped": [a.to_dict() for a in ringing]}, "alarm.stopped")
            return found
        for timer in found:
            self.remove(timer)
        if args.get("all"):
            for timer in ringing:
                self.finish(timer)
        data = {"cancelled": [t.to_dict() for t in found]}
        if len(found) == 1 and not args.get("all"):
            return ToolResult(True, data, "timer.cancelled_named" if found[0].label else "timer.cancelled",
                              {"label": found[0].label})
        return ToolResult(True, data, "timer.cancelled_all", counts={"timers": (len(found), "timer")})

    async def timer_remaining(self, args: dict[str, Any]) -> ToolResult:
        found = self._named(args, self.timers())
        if isinstance(found, ToolResult):
            return ToolResult(found.phrase == "timer.none", found.data, found.phrase, found.values)
        if len(found) == 1:
            timer = found[0]
            return self._one("paused_left" if timer.state == "paused" else "remaining", timer,
                             duration=self.left(timer))
        return ToolResult(True, {"timers": [{**t.to_dict(), "remaining_s": self.left(t)} for t in found]},
                          "timer.list", {"items": self._items(found)}, counts={"timers": (len(found), "timer")})

    def _target(self, args: dict[str, Any], state: str = "") -> Alarm | ToolResult:
        """The one timer a change means: the one named, or the only one (in `state`, when only one is); else the
        answer (none, not found, which one?)."""
        found = self._named(args, self.timers())
        if isinstance(found, ToolResult):
            return found
        in_state = [t for t in found if t.state == state]
        if state and len(in_state) == 1 and len(found) > 1 and not timer_label(str(args.get("label", ""))):
            return in_state[0]  # "pause the timer" with one running and one paused: the running one
        return found[0] if len(found) == 1 else self._which(found)

    async def change_timer(self, args: dict[str, Any]) -> ToolResult:
        timer = self._target(args)
        if isinstance(timer, ToolResult):
            return timer
        seconds, left = int(args["seconds"]), self.left(timer)
        if args["direction"] == "subtract":
            if seconds >= left:  # "take ten minutes off" with three left: said, nothing changed
                return self._one("too_short", timer, ok=False, left=left)
            seconds = -seconds
        if timer.state == "paused":
            self._write("UPDATE alarms SET left_s = ? WHERE id = ?", (left + seconds, timer.id))
        else:
            at = timer.at + timedelta(seconds=seconds)
            self._write("UPDATE alarms SET at_utc = ? WHERE id = ?", (at.astimezone(UTC).isoformat(), timer.id))
        changed = self._select("id = ?", (timer.id,))[0]
        return self._one("added" if seconds > 0 else "subtracted", changed, duration=abs(seconds),
                         left=self.left(changed))

    async def pause_timer(self, args: dict[str, Any]) -> ToolResult:
        pausing = args["action"] == "pause"
        timer = self._target(args, "pending" if pausing else "paused")
        if isinstance(timer, ToolResult):
            return timer
        left = self.left(timer)
        if pausing != (timer.state == "pending"):  # already paused / not paused: said, nothing changed
            return self._one("already_paused" if pausing else "not_paused", timer, left=left)
        if pausing:
            self._write("UPDATE alarms SET state = 'paused', left_s = ? WHERE id = ?", (left, timer.id))
        else:
            at = self._now() + timedelta(seconds=left)
            self._write("UPDATE alarms SET state = 'pending', left_s = NULL, at_utc = ? WHERE id = ?",
                        (at.astimezone(UTC).isoformat(), timer.id))
        changed = self._select("id = ?", (timer.id,))[0]
        return self._one("paused" if pausing else "resumed", changed, left=left)

    async def restart_timer(self, args: dict[str, Any]) -> ToolResult:
        """"Restart the timer": back to the length it was set for, and running (a paused one too). A timer that is
        ringing starts over (its ring stops): "the timer's done — start it again from the top"."""
        ringing = [a for a in self.ringing() if a.kind == "timer" and a.seconds]
        found = self._named(args, self.timers() + ringing)
        if isinstance(found, ToolResult):
            return found
        if len(found) > 1:
            now_ringing = [t for t in found if t.state == "ringing"]
            if len(now_ringing) != 1 or timer_label(str(args.get("label", ""))):
                return self._which(found)
            found = now_ringing  # "restart the timer" said over its ring: that one, not one still running
        timer = found[0]
        seconds = int(timer.seconds or self.left(timer))
        at = self._now() + timedelta(seconds=seconds)
        self._write("UPDATE alarms SET state = 'pending', left_s = NULL, at_utc = ? WHERE id = ?",
                    (at.astimezone(UTC).isoformat(), timer.id))
        return self._one("restarted", self._select("id = ?", (timer.id,))[0], duration=seconds)

    async def stop(self, args: dict[str, Any]) -> ToolResult:
        ringing = self.ringing()
        origin = turn_origin.get()  # "stop" said to a satellite stops what rings there (set there), if anything
        if origin:
            ringing = [a for a in ringing if a.origin == origin] or ringing
        for alarm in ringing:
            self.finish(alarm)
        return ToolResult(bool(ringing), {"stopped": [a.to_dict() for a in ringing]},
                          "alarm.stopped" if ringing else "alarm.nothing_ringing")

    async def snooze(self, args: dict[str, Any]) -> ToolResult:
        ringing = self.ringing()
        minutes = int(args.get("minutes", self.snooze_minutes))
        at = self._now() + timedelta(minutes=minutes)
        for alarm in ringing:
            self.set_state(alarm, "pending", at)
        return ToolResult(bool(ringing), {"snoozed": [a.to_dict() for a in ringing]},
                          "alarm.snoozed" if ringing else "alarm.nothing_ringing", durations={"duration": minutes * 60})

    def tools(self) -> list[Tool]:
        """The alarm family's declarations."""
        return [
            Tool(
                "set_alarm",
                "Set an alarm to ring at a time of day.",
                {"type": "object",
                 "properties": {"time": _TIME, "repeat": _REPEAT, "day": _DAY, "date": _DATE, "label": _LABEL},
                 "required": ["time"], "additionalProperties": False},
                self.set_alarm,
                family="alarms",
                sides=("set", "unset"),
                topic="alarm",
            ),
            Tool(
                "list_alarms",
                "List the alarms that are set, or say whether one is set for a time.",
                {"type": "object", "properties": {"time": _TIME, "day": _DAY, "date": _DATE},
                 "additionalProperties": False},
                self.list_alarms,
                family="alarms",
                read_only=True,
                topic="alarm",
            ),
            Tool(
                "cancel_alarm",
                "Cancel the alarm set for a time of day, or the one with a label; with day, only that day's ring.",
                {"type": "object", "properties": {"time": _TIME, "label": _LABEL, "day": _DAY, "date": _DATE},
                 "additionalProperties": False},
                self.cancel_alarm,
                family="alarms",
                sides=("unset", "set"),
                topic="alarm",
                counted=self.cancel_count,  # "the 7:30 alarm" may be nine: asked first above policy.confirm_many
            ),
            Tool(
                "move_alarm",
                "Move an alarm to another time of day, keeping its name and days.",
                {"type": "object", "properties": {"time": _TIME, "label": _LABEL, "day": _DAY, "new_time": _TIME,
                                                  "id": {"type": "integer", "minimum": 1, "x-ground": "code"}},
                 "required": ["new_time"], "additionalProperties": False},
                self.move_alarm,
                family="alarms",
                topic="alarm",
                # read from the templates only: the model's catalogue stays as it was (a small model offered one
                # more alarm tool confuses those it has); what they do not read goes to it as before
                offered=lambda: False,
            ),
            Tool(
                "cancel_all_alarms",
                "Cancel every alarm, or every alarm of one day.",
                {"type": "object", "properties": {"day": _DAY, "date": _DATE}, "additionalProperties": False},
                self.cancel_all_alarms,
                family="alarms",
                sides=("unset", "set"),
                topic="alarm",
                consequential=True,  # asked back before it runs (the confirmation policy)
                counted=self.cancel_all_count,
            ),
            Tool("set_timer", "Start a countdown timer for a duration, optionally named.",
                 {"type": "object", "properties": {"seconds": _SECONDS, "label": _TIMER_LABEL}, "required": ["seconds"],
                  "additionalProperties": False}, self.set_timer, family="alarms",
                 sides=("set", "unset")),
            Tool("cancel_timer", "Cancel a timer (by its name), or all timers.",
                 {"type": "object", "properties": {"label": _TIMER_LABEL, "all": {"type": "boolean"}},
                  "additionalProperties": False}, self.cancel_timer, family="alarms", sides=("unset", "set"),
                 counted=self.cancel_timer_count),  # "the pizza timer" may be five: asked first above confirm_many
            Tool("timer_remaining", "Say how much time is left on the timers.",
                 {"type": "object", "properties": {"label": _TIMER_LABEL}, "additionalProperties": False},
                 self.timer_remaining, family="alarms", read_only=True),
            Tool("change_timer", "Add time to a running timer or take time off it.",
                 {"type": "object", "properties": {"seconds": _SECONDS, "direction": _DIRECTION, "label": _TIMER_LABEL},
                  "required": ["seconds", "direction"], "additionalProperties": False}, self.change_timer,
                 family="alarms"),
            Tool("pause_timer", "Pause or resume a timer.",
                 {"type": "object", "properties": {"action": _PAUSE, "label": _TIMER_LABEL},
                  "required": ["action"], "additionalProperties": False}, self.pause_timer, family="alarms"),
            # read from the templates only ("restart the timer"): the model's catalogue stays as it was; before, it
            # was refused, or read as "start the timer again" (resume) or as a new timer with no length
            Tool("restart_timer", "Start a timer again from its full length.",
                 {"type": "object", "properties": {"label": _TIMER_LABEL}, "additionalProperties": False},
                 self.restart_timer, family="alarms", offered=lambda: False),
            Tool("stop", "Stop what is ringing (an alarm or a timer).",
                 {"type": "object", "properties": {}, "additionalProperties": False}, self.stop, family="alarms"),
            Tool("snooze", "Snooze the ringing alarm for a few minutes.",
                 {"type": "object", "properties": {"minutes": {"type": "integer", "minimum": 1, "maximum": 60}},
                  "additionalProperties": False}, self.snooze, family="alarms"),
        ]
