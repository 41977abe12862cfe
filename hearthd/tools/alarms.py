"""Alarms: set, list and cancel (in memory for now; durable storage comes with the scheduler)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from .registry import Tool, ToolResult

TIME_PATTERN = r"^([01][0-9]|2[0-3]):[0-5][0-9]$"
_TIME = {"type": "string", "pattern": TIME_PATTERN, "description": "24-hour time HH:MM", "x-ground": "time"}


@dataclass
class Alarm:
    """One alarm, ringing once at `at` (local, zone-aware)."""

    id: int
    at: datetime
    label: str = ""

    @property
    def hhmm(self) -> str:
        return self.at.strftime("%H:%M")

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "time": self.hhmm, "at": self.at.isoformat(), "label": self.label}


def spoken_time(hhmm: str) -> str:
    """07:30 → 7:30: how a time is written for the voices to read."""
    hours, minutes = hhmm.split(":")
    return f"{int(hours)}:{minutes}"


class AlarmBook:
    """The set of pending alarms; `now` is injected so tests control the clock."""

    def __init__(self, now: Callable[[], datetime] | None = None) -> None:
        self._now = now or (lambda: datetime.now().astimezone())
        self._alarms: dict[int, Alarm] = {}
        self._ids = itertools.count(1)

    def next_occurrence(self, hhmm: str) -> datetime:
        now = self._now()
        hours, minutes = (int(x) for x in hhmm.split(":"))
        at = now.replace(hour=hours, minute=minutes, second=0, microsecond=0)
        return at if at > now else at + timedelta(days=1)

    def add(self, hhmm: str, label: str = "") -> Alarm:
        alarm = Alarm(next(self._ids), self.next_occurrence(hhmm), label)
        self._alarms[alarm.id] = alarm
        return alarm

    def pending(self) -> list[Alarm]:
        return sorted(self._alarms.values(), key=lambda a: a.at)

    def remove(self, alarm: Alarm) -> None:
        self._alarms.pop(alarm.id, None)

    # -- tool handlers ------------------------------------------------------------------------------------

    async def set_alarm(self, args: dict[str, Any]) -> ToolResult:
        alarm = self.add(args["time"], args.get("label", "").strip())
        key = "alarm.set_labeled" if alarm.label else "alarm.set"
        return ToolResult(True, alarm.to_dict(), key, {"time": spoken_time(alarm.hhmm), "label": alarm.label})

    async def list_alarms(self, args: dict[str, Any]) -> ToolResult:
        alarms = self.pending()
        data = {"alarms": [a.to_dict() for a in alarms]}
        if not alarms:
            return ToolResult(True, data, "alarm.none")
        if len(alarms) == 1:
            return ToolResult(True, data, "alarm.list_one", {"time": spoken_time(alarms[0].hhmm)})
        times = ", ".join(spoken_time(a.hhmm) for a in alarms)
        return ToolResult(True, data, "alarm.list", {"count": len(alarms), "times": times},
                          counts={"alarms": (len(alarms), "alarm")})

    async def cancel_alarm(self, args: dict[str, Any]) -> ToolResult:
        alarms = self.pending()
        if "time" in args:
            matches = [a for a in alarms if a.hhmm == args["time"]]
            if not matches:
                return ToolResult(False, {"time": args["time"]}, "alarm.not_found",
                                  {"time": spoken_time(args["time"])})
        elif len(alarms) == 1:
            matches = alarms
        elif not alarms:
            return ToolResult(False, {}, "alarm.none")
        else:
            return ToolResult(False, {"alarms": [a.to_dict() for a in alarms]}, "alarm.which")
        for alarm in matches:
            self.remove(alarm)
        return ToolResult(True, {"cancelled": [a.to_dict() for a in matches]}, "alarm.cancelled",
                          {"time": spoken_time(matches[0].hhmm)})

    async def cancel_all_alarms(self, args: dict[str, Any]) -> ToolResult:
        alarms = self.pending()
        if not alarms:
            return ToolResult(True, {"cancelled": []}, "alarm.none")
        for alarm in alarms:
            self.remove(alarm)
        return ToolResult(True, {"cancelled": [a.to_dict() for a in alarms]}, "alarm.cancelled_all",
                          counts={"alarms": (len(alarms), "alarm")})

    def tools(self) -> list[Tool]:
        """The alarm family's declarations."""
        return [
            Tool(
                "set_alarm",
                "Set an alarm to ring at a time of day.",
                {"type": "object", "properties": {"time": _TIME},
                 "required": ["time"], "additionalProperties": False},
                self.set_alarm,
                family="alarms",
                idempotent=False,
            ),
            Tool(
                "list_alarms",
                "List the alarms that are set.",
                {"type": "object", "properties": {}, "additionalProperties": False},
                self.list_alarms,
                family="alarms",
            ),
            Tool(
                "cancel_alarm",
                "Cancel the alarm set for a time of day.",
                {"type": "object", "properties": {"time": _TIME}, "additionalProperties": False},
                self.cancel_alarm,
                family="alarms",
            ),
            Tool(
                "cancel_all_alarms",
                "Cancel every alarm.",
                {"type": "object", "properties": {}, "additionalProperties": False},
                self.cancel_all_alarms,
                family="alarms",
                consequential=True,  # asked back before it runs (the confirmation policy)
            ),
        ]
