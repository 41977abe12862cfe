"""The alarm scheduler: rings alarms and timers on time, repeats until stopped, and catches up after downtime.

State lives in the alarm store (SQLite), not here: a restart finds pending alarms as they were. At start-up an
alarm missed while the daemon was down rings if it is at most `grace` late, otherwise it is marked missed and
reported. While an alarm rings, `ring(alarm, count)` is called every `repeat` seconds (the daemon plays a
chime and says the label in the alarm's language) until "stop"/"snooze" or `max_rings`, then it stops itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta

from ..locale import phrase
from ..tools.alarms import Alarm, AlarmBook

Ring = Callable[[Alarm, int], Awaitable[None]]


def announced(alarm: Alarm) -> Alarm:
    """The alarm as its ring says it: a named timer's label becomes "The pizza timer." / "Таймер для пиццы." (the ring
    says "Time's up! {label}"), so the name is heard whatever the language's word order."""
    if alarm.kind != "timer" or not alarm.label:
        return alarm
    return dataclasses.replace(alarm, label=phrase(alarm.lang, "timer.done_named", label=alarm.label))


class Scheduler:
    def __init__(self, book: AlarmBook, ring: Ring, grace: float = 300.0, repeat: float = 30.0,
                 max_rings: int = 10) -> None:
        self.book = book
        self.ring = ring
        self.grace = timedelta(seconds=grace)
        self.repeat = timedelta(seconds=repeat)
        self.max_rings = max_rings
        self._rings: dict[int, tuple[int, datetime | None]] = {}  # alarm id -> (rings so far, last ring)

    def start(self) -> list[Alarm]:
        """After a (re)start: alarms too late to ring are marked missed and returned (to be reported); those
        within the grace window stay due and ring at the next tick. Alarms left ringing by a crash ring again."""
        now = self.book._now()
        missed = [a for a in self.book.due() if now - a.at > self.grace]
        for alarm in missed:
            self.book.set_state(alarm, "missed")
        for alarm in self.book.ringing():
            self.book.set_state(alarm, "pending")
        return missed

    async def tick(self) -> None:
        """Ring what is due; repeat what is ringing; stop what rang `max_rings` times."""
        now = self.book._now()
        for alarm in self.book.due():
            self.book.set_state(alarm, "ringing")
            self._rings[alarm.id] = (1, now)
            await self.ring(announced(alarm), 1)
        for alarm in self.book.ringing():
            count, last = self._rings.get(alarm.id, (0, None))
            if last is not None and now - last < self.repeat:
                continue
            if count >= self.max_rings:
                self.book.finish(alarm)
                self._rings.pop(alarm.id, None)
                continue
            self._rings[alarm.id] = (count + 1, now)
            await self.ring(announced(alarm), count + 1)

    async def run(self, stopping: asyncio.Event) -> None:
        """Tick until `stopping` is set, sleeping until the next alarm (at most a second, so clock changes and
        alarms added meanwhile are seen)."""
        while not stopping.is_set():
            await self.tick()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stopping.wait(), timeout=1.0)
