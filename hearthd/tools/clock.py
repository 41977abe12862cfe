"""The clock: the time now, today's date and weekday, and the weekday of a date, in the configured zone.

One tool, `get_time`, read-only (every tool costs the model's prompt tokens). How a time and a date are said (12 or
24 hours, the part of the day, the order of day and month) and the weekday names live in locales/<lang>/clock.toml;
the month names are the ones the date parser reads (numbers.toml [months]).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from typing import Any

from ..context import turn_language
from ..dates import _months
from ..language import rules
from ..locale import table
from .alarms import local_zone
from .registry import Tool, ToolResult

# every word of a declaration is in every prompt: the enum says what it asks, the date only its form
_WHAT = {"type": "string", "enum": ["time", "date", "weekday"]}
_DATE = {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$", "x-ground": "date", "description": "YYYY-MM-DD"}
# "what time is it in London": hearthd keeps one clock, so a place named is said back with the local time, never
# answered as if the local time were that place's. The user's own words only (grounded), never a zone looked up.
_PLACE = {"type": "string", "minLength": 1, "maxLength": 40, "x-ground": "words",
          "description": "a place asked about other than here"}


def say_time(now: datetime, lang: str) -> str:
    """"7:05 pm", "19:05", "शाम के 7:05": the wall time as `lang` says it (clock.toml `time` and `parts`)."""
    words = table(lang, "clock.toml")
    part = ""
    for start, name in sorted((int(h), str(p)) for h, p in words.get("parts", {}).items()):
        if now.hour >= start:
            part = name  # the last part of the day that has begun
    return str(words["time"]).format(hour=now.hour, hour12=now.hour % 12 or 12, minute=f"{now.minute:02d}",
                                     part=part)


def weekday_name(day: date, lang: str) -> str:
    """"Tuesday", "вторник", "मंगलवार" (clock.toml `weekdays`, Monday first)."""
    return str(table(lang, "clock.toml")["weekdays"][day.weekday()])


def say_day(day: date, lang: str) -> str:
    """"December 1", "1 декабря", "1 दिसंबर": the month by the first name the parser reads that is not a short
    form of another ("december", not "dec"; "may" and "मई" are whole names)."""
    names = [k for k, v in _months(lang).items() if v == day.month]
    month = next((n for n in names if not any(o != n and o.startswith(n) for o in names)), str(day.month))
    if rules(lang).capitalize_months:
        month = month.capitalize()
    return str(table(lang, "clock.toml")["date"]).format(day=day.day, month=month)


class Clock:
    """The wall clock in the configured zone; `now` is injected so tests fix the instant (and its zone)."""

    def __init__(self, now: Callable[[], datetime] | None = None, zone: str = "") -> None:
        tz = local_zone(zone)
        self.now = now or (lambda: datetime.now(tz))

    async def get_time(self, args: dict[str, Any]) -> ToolResult:
        lang = turn_language.get()  # the reply's language: the time's form depends on it (12/24 h, parts of day)
        now = self.now()
        today = now.date()
        day = date.fromisoformat(args["date"]) if "date" in args else today
        what = "date" if "date" in args else str(args.get("what", "time"))  # a date that is today: "Today is …, Dec 1"
        data = {"time": now.strftime("%H:%M"), "date": day.isoformat(), "weekday": day.strftime("%A").lower(),
                "zone": str(getattr(now.tzinfo, "key", None) or now.tzname() or "")}
        values = {"time": say_time(now, lang), "date": say_day(day, lang), "weekday": weekday_name(day, lang)}
        if day != today:
            return ToolResult(True, data, "clock.weekday_of", values)
        if str(args.get("place", "")).strip() and what == "time":
            place = str(args["place"]).strip()
            return ToolResult(True, {**data, "place": place, "local_only": True}, "clock.only_local",
                              {**values, "place": place})
        key = {"date": "clock.date", "weekday": "clock.weekday"}.get(what, "clock.time")
        return ToolResult(True, data, key, values)

    def tools(self) -> list[Tool]:
        """The clock's one declaration."""
        return [Tool("get_time", "Say the time, today's date or weekday, or a date's weekday.",
                     {"type": "object", "properties": {"what": _WHAT, "date": _DATE, "place": _PLACE},
                      "additionalProperties": False},
                     self.get_time, family="clock", read_only=True)]
