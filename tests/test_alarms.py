"""Alarms and timers that survive restarts and crashes, ring on time, and keep their wall time across DST."""

from __future__ import annotations

import asyncio
import functools
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from hearthd.context import turn_language
from hearthd.daemon.lifecycle import STOP_GRACE_S
from hearthd.daemon.scheduler import Scheduler
from hearthd.tools.alarms import Alarm, AlarmBook

BERLIN = ZoneInfo("Europe/Berlin")


class Clock:
    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(coro)


def test_alarms_and_timers_survive_a_restart(tmp_path: Path) -> None:
    clock = Clock(datetime(2026, 11, 30, 22, 0, tzinfo=BERLIN))
    book = AlarmBook(now=clock, path=tmp_path / "alarms.db")
    turn_language.set("ru")
    book.add("07:30", "работа")
    run(book.set_timer({"seconds": 600}))
    book.close()  # the daemon goes away
    again = AlarmBook(now=clock, path=tmp_path / "alarms.db")
    (alarm,) = again.pending()
    assert (alarm.hhmm, alarm.label, alarm.lang, alarm.at.date().isoformat()) == ("07:30", "работа", "ru", "2026-12-01")
    (timer,) = again.pending("timer")
    assert timer.seconds == 600 and timer.at == clock.now + timedelta(minutes=10)


def test_a_sigkilled_writer_loses_nothing_it_committed(tmp_path: Path) -> None:
    """A process sets alarms and is killed with SIGKILL mid-stream: every alarm it reported is there."""
    db = tmp_path / "alarms.db"
    script = textwrap.dedent(f"""
        import os, signal, sys
        from hearthd.tools.alarms import AlarmBook
        book = AlarmBook(path=__import__("pathlib").Path({str(db)!r}))
        for i in range(50):
            book.add(f"{{6 + i % 12:02d}}:{{i % 60:02d}}", f"a{{i}}")
            print(i, flush=True)
            if i == 29:
                os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL
    reported = len(proc.stdout.split())
    assert sqlite3.connect(db).execute("PRAGMA integrity_check").fetchone() == ("ok",)
    labels = {a.label for a in AlarmBook(path=db).pending()}
    assert reported == 30 and labels == {f"a{i}" for i in range(30)}


def test_an_alarm_keeps_its_wall_time_across_the_dst_change(tmp_path: Path) -> None:
    """Set on Saturday evening for 7:00; summer time ends that night (25 Oct 2026, 03:00 → 02:00)."""
    clock = Clock(datetime(2026, 10, 24, 21, 0, tzinfo=BERLIN))
    book = AlarmBook(now=clock, path=tmp_path / "alarms.db")
    alarm = book.add("07:00")
    assert alarm.at.astimezone(UTC) == datetime(2026, 10, 25, 6, 0, tzinfo=UTC)  # 07:00 CET, not 07:00 CEST
    rings: list[Alarm] = []

    async def ring(a: Alarm, n: int) -> None:
        rings.append(a)

    scheduler = Scheduler(book, ring)
    clock.now = datetime(2026, 10, 25, 5, 59, tzinfo=UTC).astimezone(BERLIN)  # 06:59 CET
    run(scheduler.tick())
    assert rings == []
    clock.now = datetime(2026, 10, 25, 6, 0, tzinfo=UTC).astimezone(BERLIN)
    run(scheduler.tick())
    assert [a.hhmm for a in rings] == ["07:00"]


def test_ringing_repeats_until_stopped_and_snooze_brings_it_back(tmp_path: Path) -> None:
    clock = Clock(datetime(2026, 11, 30, 6, 0, tzinfo=BERLIN))
    book = AlarmBook(now=clock, path=tmp_path / "alarms.db")
    book.add("06:30")
    rings: list[int] = []

    async def ring(a: Alarm, n: int) -> None:
        rings.append(n)

    scheduler = Scheduler(book, ring, repeat=30, max_rings=3)
    clock.now += timedelta(minutes=30)
    run(scheduler.tick())
    clock.now += timedelta(seconds=10)
    run(scheduler.tick())  # too soon to repeat
    clock.now += timedelta(seconds=30)
    run(scheduler.tick())
    assert rings == [1, 2]
    result = run(book.snooze({}))
    assert result.ok and result.durations == {"duration": 9 * 60} and book.ringing() == []
    clock.now += timedelta(minutes=9)
    run(scheduler.tick())
    assert rings == [1, 2, 1]
    assert run(book.stop({})).ok and book.ringing() == [] and book.pending() == []
    assert not run(book.stop({})).ok  # nothing left ringing


def test_ringing_stops_by_itself_after_max_rings(tmp_path: Path) -> None:
    clock = Clock(datetime(2026, 11, 30, 6, 0, tzinfo=BERLIN))
    book = AlarmBook(now=clock, path=tmp_path / "alarms.db")
    book.add("06:01")
    rings: list[int] = []

    async def ring(a: Alarm, n: int) -> None:
        rings.append(n)

    scheduler = Scheduler(book, ring, repeat=30, max_rings=2)
    for _ in range(6):
        clock.now += timedelta(seconds=31)
        run(scheduler.tick())
    assert rings == [1, 2] and book.ringing() == []


def test_after_downtime_late_alarms_ring_within_grace_and_older_ones_are_reported(tmp_path: Path) -> None:
    clock = Clock(datetime(2026, 11, 30, 5, 0, tzinfo=BERLIN))
    book = AlarmBook(now=clock, path=tmp_path / "alarms.db")
    book.add("06:00", "old")
    book.add("07:58", "recent")
    book.close()
    clock.now = datetime(2026, 11, 30, 8, 0, tzinfo=BERLIN)  # the daemon comes back at 8:00
    book = AlarmBook(now=clock, path=tmp_path / "alarms.db")
    rang: list[str] = []

    async def ring(a: Alarm, n: int) -> None:
        rang.append(a.label)

    scheduler = Scheduler(book, ring, grace=300)
    missed = scheduler.start()
    assert [a.label for a in missed] == ["old"]
    run(scheduler.tick())
    assert rang == ["recent"]


@pytest.mark.parametrize("seconds,left", [(600, 600), (90, 90)])
def test_timer_remaining_and_cancel(tmp_path: Path, seconds: int, left: int) -> None:
    clock = Clock(datetime(2026, 11, 30, 12, 0, tzinfo=BERLIN))
    book = AlarmBook(now=clock, path=tmp_path / "alarms.db")
    assert run(book.timer_remaining({})).phrase == "timer.none"
    run(book.set_timer({"seconds": seconds}))
    clock.now += timedelta(seconds=30)
    out = run(book.timer_remaining({}))
    assert out.durations == {"duration": left - 30}
    assert run(book.cancel_timer({})).ok and book.pending("timer") == []


def test_the_alarm_store_lives_under_the_state_dir(base_config, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from hearthd.daemon.components import Components

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    c = Components(base_config)
    c.alarms.add("06:00")
    assert (tmp_path / "hearthd" / "alarms.db").is_file()
    assert [a.hhmm for a in Components(base_config).alarms.pending()] == ["06:00"]


def _read_until(proc: subprocess.Popen, kind: str, timeout: float) -> dict:  # type: ignore[type-arg]
    import json
    import selectors
    import time

    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)  # type: ignore[arg-type]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sel.select(timeout=0.5):
            line = proc.stdout.readline()  # type: ignore[union-attr]
            if not line:
                break
            if line.startswith("{") and json.loads(line).get("type") == kind:
                return json.loads(line)  # type: ignore[no-any-return]
    raise AssertionError(f"no {kind} event within {timeout} s")


def test_kill_9_of_the_running_daemon_loses_no_timer_and_the_restart_rings_it(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path)}
    hd = [sys.executable, "-m", "hearthd"]
    subprocess.run([*hd, "ask", "поставь таймер на 8 секунд"], env=env, check=True, capture_output=True, timeout=60)
    daemon = subprocess.Popen([*hd, "run", "--headless", "--json"], env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert _read_until(daemon, "ready", 30)["pending"] == 1
    finally:
        daemon.send_signal(signal.SIGKILL)
        daemon.wait(10)
    assert daemon.returncode == -signal.SIGKILL
    rings = tmp_path / "rings"
    daemon = subprocess.Popen([*hd, "run", "--headless", "--json", "--ring-output", str(rings)], env=env,
                              stdout=subprocess.PIPE, text=True)
    try:
        event = _read_until(daemon, "alarm", 40)
        assert (event["kind"], event["lang"], event["count"]) == ("timer", "ru", 1)
        assert event["text"].startswith("Время вышло!")
        sound = _read_until(daemon, "audio_out", 60)  # the chime, then the words in Russian
        assert sound["seconds"] > 1.0 and Path(sound["path"]).is_file()
    finally:
        daemon.send_signal(signal.SIGTERM)
        # SIGTERM stops it cleanly, within the service's TimeoutStopSec: the ring being spoken finishes first (at most
        # STOP_GRACE_S), which on a busy machine is more than ten seconds
        assert daemon.wait(STOP_GRACE_S + 10) == 0


def test_a_repeating_alarm_rings_on_its_days_and_moves_on_when_stopped(tmp_path: Path) -> None:
    clock = Clock(datetime(2026, 12, 4, 8, 0, tzinfo=BERLIN))  # a Friday, after 07:00
    book = AlarmBook(now=clock, path=tmp_path / "alarms.db")
    out = run(book.set_alarm({"time": "07:00", "repeat": "weekdays"}))
    assert out.phrase == "alarm.set_weekdays"
    (alarm,) = book.pending()
    assert alarm.at == datetime(2026, 12, 7, 7, 0, tzinfo=BERLIN)  # Monday: the weekend is skipped
    rings: list[str] = []

    async def ring(a: Alarm, n: int) -> None:
        rings.append(a.at.strftime("%a %H:%M"))

    scheduler = Scheduler(book, ring)
    clock.now = datetime(2026, 12, 7, 7, 0, tzinfo=BERLIN)
    run(scheduler.tick())
    run(book.stop({}))
    (alarm,) = book.pending()
    assert rings == ["Mon 07:00"] and alarm.at == datetime(2026, 12, 8, 7, 0, tzinfo=BERLIN)  # Tuesday next


def test_tomorrow_means_tomorrow_even_when_the_time_is_still_ahead_today(tmp_path: Path) -> None:
    clock = Clock(datetime(2026, 12, 1, 5, 0, tzinfo=BERLIN))
    book = AlarmBook(now=clock, path=tmp_path / "alarms.db")
    assert run(book.set_alarm({"time": "07:00", "day": "tomorrow"})).phrase == "alarm.set_tomorrow"
    assert run(book.set_alarm({"time": "07:30"})).phrase == "alarm.set"
    assert [a.at.day for a in book.pending()] == [1, 2]  # 07:30 today, 07:00 tomorrow


@functools.cache
def alarm_fast_path() -> Any:
    """The sentence library over the alarm tools alone, built once for the tests that read sentences with it."""
    from hearthd.agent.fastpath import FastPath
    from hearthd.tools.registry import ToolRegistry

    return FastPath(ToolRegistry(AlarmBook().tools()))


@pytest.mark.parametrize("text,lang,args", [
    ("set an alarm for 7 am every day", "en", {"time": "07:00", "repeat": "daily"}),
    ("wake me up tomorrow at 6", "en", {"time": "06:00", "day": "tomorrow"}),
    ("поставь будильник по будням на 6:30", "ru", {"time": "06:30", "repeat": "weekdays"}),
    ("разбуди меня завтра в 7:30", "ru", {"time": "07:30", "day": "tomorrow"}),
    ("कल सुबह सात बजे का अलार्म लगा दो", "hi", {"time": "07:00", "day": "tomorrow"}),
    ("har somvar 7 baje ka alarm laga do", "hi", {"time": "07:00", "repeat": "monday"}),
    # a habit is said as one: the imperfective in Russian, a plan in English; the repeat is kept either way
    ("буди меня каждый день в семь", "ru", {"time": "07:00", "repeat": "daily"}),
    ("по будням буди меня в шесть утра", "ru", {"time": "06:00", "repeat": "weekdays"}),
    ("можешь будить меня по выходным в девять", "ru", {"time": "09:00", "repeat": "weekends"}),
    ("I want to wake up at seven every day", "en", {"time": "07:00", "repeat": "daily"}),
    ("I need to be up by 6:30 on weekdays", "en", {"time": "06:30", "repeat": "weekdays"}),
    ("could you get me up every morning at 7", "en", {"time": "07:00", "repeat": "daily"}),
    ("हर दिन छह बजे जगा देना", "hi", {"time": "06:00", "repeat": "daily"}),
])
def test_repeats_and_days_are_read_by_the_templates(text: str, lang: str, args: dict) -> None:  # type: ignore[type-arg]
    decision = alarm_fast_path().match(text, lang)
    assert decision is not None and [(c.name, c.arguments) for c in decision.calls] == [("set_alarm", args)]


@pytest.mark.parametrize("text,lang", [("не буди меня в семь", "ru"), ("I don't need to get up at 7 every day", "en")])
def test_a_habit_said_not_to_is_no_alarm(text: str, lang: str) -> None:
    assert alarm_fast_path().match(text, lang) is None  # never taken as the request it denies


@pytest.mark.parametrize("text,lang,call", [
    ("stop", "en", ("stop", {})), ("snooze", "en", ("snooze", {})),
    ("ten more minutes", "en", ("snooze", {"minutes": 10})),
    ("отложи будильник", "ru", ("snooze", {})), ("ещё десять минут", "ru", ("snooze", {"minutes": 10})),
    ("दस मिनट और सोने दो", "hi", ("snooze", {"minutes": 10})), ("snooze karo", "hi", ("snooze", {})),
])
def test_stop_and_snooze_by_voice(text: str, lang: str, call: tuple) -> None:  # type: ignore[type-arg]
    decision = alarm_fast_path().match(text, lang)
    assert decision is not None and [(c.name, c.arguments) for c in decision.calls] == [call]


def test_an_alarm_is_set_and_cancelled_by_its_label(base_config, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from hearthd.daemon.components import Components
    from hearthd.daemon.pipeline import Pipeline
    from hearthd.events import Trace

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    c = Components(base_config)
    said = [asyncio.run(Pipeline(c, Trace()).run_text(t)).reply
            for t in ("set an alarm for 7 am called gym", "set an alarm for 8 am", "cancel the alarm called gym",
                      "cancel the alarm called dentist")]
    assert said[0] == "Alarm set for 7:00: gym."
    assert said[3] == "I couldn't find an alarm called dentist."
    assert [(a.hhmm, a.label) for a in c.alarms.pending()] == [("08:00", "")]


def test_the_chime_is_audible_and_click_free() -> None:
    import numpy as np

    from hearthd.audio.chime import chime

    audio = chime(22050).astype(np.float64)
    assert 0.5 < len(audio) / 22050 < 1.5 and 10000 < np.abs(audio).max() < 32767
    assert abs(audio[0]) < 500 and abs(audio[-1]) < 10  # soft attack, silent tail


@pytest.mark.parametrize("text,lang,call", [
    ("поставь будильник на 7:00 с подписью спортзал", "ru", ("set_alarm", {"time": "07:00", "label": "спортзал"})),
    ("отмени будильник с подписью спортзал", "ru", ("cancel_alarm", {"label": "спортзал"})),
    ("सुबह सात बजे का अलार्म जिम नाम से लगा दो", "hi", ("set_alarm", {"time": "07:00", "label": "जिम"})),
    ("जिम नाम वाला अलार्म हटा दो", "hi", ("cancel_alarm", {"label": "जिम"})),
])
def test_labels_in_russian_and_hindi(text: str, lang: str, call: tuple) -> None:  # type: ignore[type-arg]
    decision = alarm_fast_path().match(text, lang)
    assert decision is not None and [(c.name, c.arguments) for c in decision.calls] == [call]


@pytest.mark.parametrize("lang,setting,cancel,yes,label", [
    ("en", "set an alarm for {} called gym", "cancel the alarm called gym", "yes", "gym"),
    ("ru", "поставь будильник на {} с подписью спортзал", "удали будильник под названием спортзал", "да", "спортзал"),
])
def test_cancelling_a_label_several_alarms_share_asks_with_the_count(base_config, tmp_path: Path, monkeypatch,  # type: ignore[no-untyped-def]
                                                                    lang: str, setting: str, cancel: str, yes: str,
                                                                    label: str) -> None:
    from hearthd.daemon.components import Components
    from hearthd.daemon.pipeline import Pipeline
    from hearthd.events import Trace
    from hearthd.locale import phrase
    from hearthd.spoken import say_count

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    c = Components(base_config)
    for hhmm in ("6:10", "7:10", "8:10"):
        c.alarms.add(f"0{hhmm}", label)
    c.alarms.add("09:00")
    said = [asyncio.run(Pipeline(c, Trace()).run_text(t, language=lang)).reply for t in (cancel, yes)]
    count = say_count(3, "alarm", lang)
    assert said[0] == phrase(lang, "confirm.cancel_alarm_many_labeled", count=count, label=label)
    assert said[1] == phrase(lang, "alarm.cancelled_many_labeled", alarms=count, label=label)
    assert [(a.hhmm, a.label) for a in c.alarms.pending()] == [("09:00", "")]


@pytest.mark.parametrize("lang,cancel,left", [
    ("en", "cancel my morning alarm", [("12:30", "gym"), ("19:30", "")]),
    ("ru", "отмени утренний будильник", [("12:30", "gym"), ("19:30", "")]),
    ("hi", "सुबह वाला अलार्म कैंसल कर दो", [("12:30", "gym"), ("19:30", "")]),
    ("ru", "вечерний будильник не нужен", [("06:45", ""), ("12:30", "gym")]),
    ("hi", "shaam wala alarm hata do", [("06:45", ""), ("12:30", "gym")]),
])
def test_an_alarm_named_by_the_part_of_the_day_it_rings_in_is_that_one(base_config, tmp_path: Path, monkeypatch,  # type: ignore[no-untyped-def]
                                                                      lang: str, cancel: str,
                                                                      left: list[tuple[str, str]]) -> None:
    """"Cancel my morning alarm" with none called "morning": the one that rings in the morning, where hearthd said it
    found no alarm of that name (the Russian and Hindi went to the model)."""
    from hearthd.daemon.components import Components
    from hearthd.daemon.pipeline import Pipeline
    from hearthd.events import Trace

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    c = Components(base_config)
    c.alarms.add("06:45")
    c.alarms.add("19:30")
    c.alarms.add("12:30", "gym")
    result = asyncio.run(Pipeline(c, Trace()).run_text(cancel, language=lang))
    assert result.decision is not None and result.decision.source == "fastpath", result.reply
    assert sorted((a.hhmm, a.label) for a in c.alarms.pending()) == left, result.reply


# -- switched off, counted, asked about (issue 25): answered from the alarms set, never the generic refusal --------

@pytest.mark.parametrize("text,lang,call", [
    ("set the alarm off", "en", ("cancel_alarm", {})),
    ("disable alarm for three pm", "en", ("cancel_alarm", {"time": "15:00"})),
    ("deactivate my 6:30 alarm", "en", ("cancel_alarm", {"time": "06:30"})),
    ("I don't need an alarm at 7 anymore", "en", ("cancel_alarm", {"time": "07:00"})),
    ("turn the 8 am alarm off", "en", ("cancel_alarm", {"time": "08:00"})),
    ("будильник на восемь отмени", "ru", ("cancel_alarm", {"time": "08:00"})),
    ("отключи будильник", "ru", ("cancel_alarm", {})),
    ("7 baje wala alarm off kar do", "hi", ("cancel_alarm", {"time": "07:00"})),
    ("अलार्म डिसेबल कर दो", "hi", ("cancel_alarm", {})),
    ("how many alarms do i have", "en", ("list_alarms", {})), ("how many alarms are set", "en", ("list_alarms", {})),
    ("do i have any alarms set for six am tomorrow", "en", ("list_alarms", {"time": "06:00", "day": "tomorrow"})),
    ("is there an alarm at 7:30", "en", ("list_alarms", {"time": "07:30"})),
    ("will my alarm go off at 6 tomorrow", "en", ("list_alarms", {"time": "06:00", "day": "tomorrow"})),
    ("сколько у меня будильников", "ru", ("list_alarms", {})),
    ("есть ли будильник на семь утра завтра", "ru", ("list_alarms", {"time": "07:00", "day": "tomorrow"})),
    ("стоит ли будильник на 6:30", "ru", ("list_alarms", {"time": "06:30"})),
    ("mere kitne alarm hain", "hi", ("list_alarms", {})),
    ("kya kal 6 baje ka alarm laga hai", "hi", ("list_alarms", {"time": "06:00", "day": "tomorrow"})),
    ("क्या सात बजे का कोई अलार्म है", "hi", ("list_alarms", {"time": "07:00"})),
    # the day asked about is the day answered: tomorrow's alarms, not every alarm; and none when no day is said
    ("any alarms tomorrow?", "en", ("list_alarms", {"day": "tomorrow"})),
    ("have I got an alarm set for today", "en", ("list_alarms", {"day": "today"})),
    ("what alarms are there tomorrow morning", "en", ("list_alarms", {"day": "tomorrow"})),
    ("have I got any alarm set", "en", ("list_alarms", {})),
    ("какие у меня будильники на сегодня", "ru", ("list_alarms", {"day": "today"})),
    ("есть ли будильник завтра", "ru", ("list_alarms", {"day": "tomorrow"})),
    ("kal ke alarm batao", "hi", ("list_alarms", {"day": "tomorrow"})),
    ("आज कौन से अलार्म लगे हैं", "hi", ("list_alarms", {"day": "today"})),
])
def test_alarms_switched_off_counted_and_asked_about_are_read(text: str, lang: str, call: tuple) -> None:  # type: ignore[type-arg]
    decision = alarm_fast_path().match(text, lang)
    assert decision is not None and [(c.name, c.arguments) for c in decision.calls] == [call], text


def test_turn_the_alarm_off_without_a_time_is_not_read_as_a_cancel() -> None:
    """It may mean the alarm ringing now: left to what follows the templates, as "turn off the alarm" is."""
    for text in ("turn the alarm off", "turn off the alarm"):
        decision = alarm_fast_path().match(text, "en")
        assert decision is None or "cancel_alarm" not in [c.name for c in decision.calls], text


def test_alarms_are_answered_about_and_a_missing_one_is_said(base_config, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Through the whole chain, at noon: a question about an alarm is answered yes or no from those set, one that is
    not there is said not to be ("You have no alarm at 9:00") and nothing is cancelled, "set the alarm off" with one
    left cancels it; the model is never asked."""
    from hearthd.daemon.components import Components
    from hearthd.daemon.pipeline import Pipeline
    from hearthd.events import Trace
    from hearthd.locale import phrase

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    c = Components(base_config)
    noon = datetime(2026, 12, 1, 12, 0, tzinfo=ZoneInfo("Europe/Berlin"))
    c.alarms._now = lambda: noon
    monkeypatch.setattr(c, "agent", lambda: pytest.fail("the model was asked"))

    def say(text: str, lang: str = "en") -> str:
        return asyncio.run(Pipeline(c, Trace()).run_text(text, language=lang)).reply

    say("set an alarm for 6 am")
    say("set an alarm for 7:30 pm")
    assert say("how many alarms do I have") == "You have 2 alarms: 19:30, 6:00."  # the next to ring first
    assert say("do i have any alarms set for six am tomorrow") == "Yes, you have an alarm tomorrow at 6:00."
    assert say("is there an alarm at 9") == "No, you have no alarm at 9:00."
    assert say("есть ли у меня будильник на шесть утра", "ru") == phrase("ru", "alarm.at_yes", time="6:00")
    assert say("kya 9 baje ka alarm laga hai", "hi") == phrase("hi", "alarm.at_no", time="9:00")
    assert say("cancel my 9 am alarm") == "You have no alarm at 9:00."
    assert len(c.alarms.pending()) == 2  # nothing cancelled
    assert say("disable alarm for 7:30 pm") == "Alarm for 19:30 cancelled."
    assert say("set the alarm off") == "Alarm for 6:00 cancelled."
    assert say("how many alarms do I have") == phrase("en", "alarm.none") and c.alarms.pending() == []
    assert say("is my alarm set for 6") == "No, you have no alarm at 6:00."


@pytest.mark.parametrize("text,lang", [("turn it off", "en"), ("Okay, I'm up.", "en"), ("выключи", "ru"),
                                       ("Я встала.", "ru"), ("बंद कर दो", "hi"), ("uth gaya", "hi")])
def test_an_off_said_alone_while_it_rings_stops_the_alarm(base_config, tmp_path: Path, monkeypatch, text: str,  # type: ignore[no-untyped-def]
                                                          lang: str) -> None:
    """While an alarm rings, "turn it off", "выключи", "बंद कर दो" mean the alarm: it stops, and no question which
    device is asked (a verb said alone asks that at any other time)."""
    from hearthd.daemon.components import Components
    from hearthd.daemon.pipeline import Pipeline
    from hearthd.events import EventType, Trace

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    c = Components(base_config)
    assert run(c.tools.get("set_alarm").handler({"time": "07:00"})).ok
    (alarm,) = c.alarms.pending()
    c.alarms.set_state(alarm, "ringing")
    trace = Trace()
    asyncio.run(Pipeline(c, trace).run_text(text, language=lang))
    assert [e.name for e in trace.of_type(EventType.TOOL_CALL)] == ["stop"]
    assert c.alarms.ringing() == []
    if text in ("выключи", "बंद कर दो"):  # nothing rings now: the verb alone is a request of its own
        again = Trace()
        asyncio.run(Pipeline(c, again).run_text(text, language=lang))
        assert again.of_type(EventType.TOOL_CALL) == []
        assert [e.missing for e in again.of_type(EventType.CLARIFY)] == ["device"]


@pytest.mark.parametrize("text,lang", [("cancel the alarm", "en"), ("disable my alarm", "en"),
                                       ("отмени будильник", "ru"), ("अलार्म हटा दो", "hi")])
def test_the_alarm_cancelled_while_it_rings_is_the_ringing_one_stopped(base_config, tmp_path: Path, monkeypatch,  # type: ignore[no-untyped-def]
                                                                        text: str, lang: str) -> None:
    """"Cancel the alarm" while one rings, with another set for later: the call named no alarm, so the two were asked
    about ("which one?") or, with one left, the later one was cancelled while this one rang on. Now the ringing one
    stops and the later one stays."""
    from hearthd.daemon.components import Components
    from hearthd.daemon.pipeline import Pipeline
    from hearthd.events import EventType, Trace

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    c = Components(base_config)
    assert run(c.tools.get("set_alarm").handler({"time": "07:00"})).ok
    (alarm,) = c.alarms.pending()
    c.alarms.set_state(alarm, "ringing")
    assert run(c.tools.get("set_alarm").handler({"time": "08:00"})).ok
    trace = Trace()
    asyncio.run(Pipeline(c, trace).run_text(text, language=lang))
    assert [e.name for e in trace.of_type(EventType.TOOL_CALL)] == ["stop"]
    assert c.alarms.ringing() == []
    assert [a.hhmm for a in c.alarms.pending()] == ["08:00"]


def test_garbage_while_it_rings_leaves_it_ringing_and_the_next_cancel_still_stops_it(  # type: ignore[no-untyped-def]
        base_config, tmp_path: Path, monkeypatch) -> None:
    from hearthd.daemon.components import Components
    from hearthd.daemon.pipeline import Pipeline
    from hearthd.events import EventType, Trace

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    c = Components(base_config)
    assert run(c.tools.get("set_alarm").handler({"time": "07:00"})).ok
    (alarm,) = c.alarms.pending()
    c.alarms.set_state(alarm, "ringing")
    for junk in ("??", "zxq vbn 42 !!", "\u200b", "the the the " * 100):
        trace = Trace()
        asyncio.run(Pipeline(c, trace).run_text(junk, language="en"))
        assert trace.of_type(EventType.TOOL_CALL) == [] and c.alarms.ringing(), junk
    trace = Trace()
    asyncio.run(Pipeline(c, trace).run_text("cancel the alarm", language="en"))
    assert [e.name for e in trace.of_type(EventType.TOOL_CALL)] == ["stop"] and c.alarms.ringing() == []
