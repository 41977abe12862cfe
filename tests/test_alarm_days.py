"""One day's alarms ("no alarm tomorrow", "cancel all my alarms for tomorrow", "отмени завтрашний будильник",
"कल का अलार्म हटा दो"): that day's rings are cancelled, not every alarm; a repeating alarm keeps its days and only
skips that one, across a restart too; the question before cancelling them says the day."""

from __future__ import annotations

import asyncio
import functools
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from hearthd.daemon.scheduler import Scheduler
from hearthd.tools.alarms import Alarm, AlarmBook

from .test_alarms import BERLIN, Clock, run


def _rings(book: AlarmBook) -> list[tuple[str, str]]:
    return sorted((a.at.strftime("%a %d %H:%M"), a.repeat) for a in book.pending())


def test_tomorrows_alarms_go_and_a_repeat_only_skips_tomorrow(tmp_path: Path) -> None:
    clock = Clock(datetime(2026, 12, 1, 22, 0, tzinfo=BERLIN))  # Tuesday evening
    book = AlarmBook(now=clock, path=tmp_path / "alarms.db")
    book.add("06:30", day="tomorrow")  # Wednesday, once
    book.add("07:00", repeat="weekdays")  # next: Wednesday
    book.add("09:00", repeat="saturday")  # not tomorrow
    book.add("23:00")  # tonight, once
    assert book.cancel_all_count({"day": "tomorrow"}) == (2, "alarm")
    out = run(book.cancel_all_alarms({"day": "tomorrow"}))
    assert out.ok and out.phrase == "alarm.day_off_tomorrow" and out.values["times"] == "6:30, 7:00"
    assert [a["time"] for a in out.data["cancelled"]] == ["06:30"] and [a["time"] for a in out.data["skipped"]] == [
        "07:00"]
    # tonight's and Saturday's untouched; the weekday alarm's next ring is Thursday
    assert _rings(book) == [("Sat 05 09:00", "saturday"), ("Thu 03 07:00", "weekdays"), ("Tue 01 23:00", "")]
    assert run(book.cancel_all_alarms({"day": "tomorrow"})).phrase == "alarm.day_none_tomorrow"
    assert len(book.pending()) == 3  # asked again: nothing more goes


def test_a_repeat_that_rings_before_the_day_off_rings_then_skips_it_even_after_a_restart(tmp_path: Path) -> None:
    clock = Clock(datetime(2026, 12, 1, 6, 0, tzinfo=BERLIN))  # Tuesday, before its 07:00 ring
    book = AlarmBook(now=clock, path=tmp_path / "alarms.db")
    book.add("07:00", repeat="daily")
    out = run(book.cancel_alarm({"day": "tomorrow"}))
    assert out.phrase == "alarm.day_off_repeat_tomorrow" and out.values["times"] == "7:00"
    (alarm,) = book.pending()
    assert alarm.at == datetime(2026, 12, 1, 7, 0, tzinfo=BERLIN)  # today's ring stays
    assert not book.rings_on(alarm, book.day_of("tomorrow")) and book.rings_on(alarm, book.day_of("today"))
    asked = run(book.list_alarms({"time": "07:00", "day": "tomorrow"}))  # "is my alarm on for 7 tomorrow?"
    assert asked.phrase == "alarm.at_no_tomorrow"
    assert run(book.list_alarms({"time": "07:00", "day": "today"})).phrase == "alarm.at_yes"
    book.close()
    book = AlarmBook(now=clock, path=tmp_path / "alarms.db")  # the day off is kept on disk
    rings: list[str] = []

    async def ring(a: Alarm, n: int) -> None:
        rings.append(a.at.strftime("%a %H:%M"))

    clock.now = datetime(2026, 12, 1, 7, 0, tzinfo=BERLIN)
    run(Scheduler(book, ring).tick())
    run(book.stop({}))
    (alarm,) = book.pending()
    assert rings == ["Tue 07:00"] and alarm.at == datetime(2026, 12, 3, 7, 0, tzinfo=BERLIN)  # Thursday, not Wednesday
    assert alarm.skip == ""  # once past, the day off is forgotten: the week after rings as usual


def test_a_day_with_several_alarms_asks_which_unless_all_were_meant(tmp_path: Path) -> None:
    clock = Clock(datetime(2026, 12, 1, 22, 0, tzinfo=BERLIN))
    book = AlarmBook(now=clock, path=tmp_path / "alarms.db")
    book.add("06:30", day="tomorrow")
    book.add("08:00", day="tomorrow")
    assert run(book.cancel_alarm({"day": "tomorrow"})).phrase == "alarm.which"
    out = run(book.cancel_alarm({"day": "tomorrow", "time": "08:00"}))
    assert out.phrase == "alarm.day_off_tomorrow" and [a.hhmm for a in book.pending()] == ["06:30"]
    assert run(book.cancel_alarm({"day": "today"})).phrase == "alarm.day_none_today"
    assert len(book.pending()) == 1


@functools.cache
def alarm_fast_path() -> Any:
    from hearthd.agent.fastpath import FastPath
    from hearthd.tools.registry import ToolRegistry

    return FastPath(ToolRegistry(AlarmBook().tools()))


@pytest.mark.parametrize("text,lang,call", [
    ("cancel all my alarms for tomorrow", "en", ("cancel_all_alarms", {"day": "tomorrow"})),
    ("turn off all the alarms tomorrow", "en", ("cancel_all_alarms", {"day": "tomorrow"})),
    ("please clear today's alarms", "en", ("cancel_all_alarms", {"day": "today"})),
    ("no alarms tomorrow please", "en", ("cancel_all_alarms", {"day": "tomorrow"})),
    ("I won't need any alarms tomorrow", "en", ("cancel_all_alarms", {"day": "tomorrow"})),
    ("could you cancel tomorrow's alarm", "en", ("cancel_alarm", {"day": "tomorrow"})),
    ("I don't need the alarm tomorrow", "en", ("cancel_alarm", {"day": "tomorrow"})),
    ("skip tomorrow's 6:30 alarm", "en", ("cancel_alarm", {"day": "tomorrow", "time": "06:30"})),
    ("switch off the alarm for tomorrow", "en", ("cancel_alarm", {"day": "tomorrow"})),
    ("no alarm tomorrow", "en", ("cancel_alarm", {"day": "tomorrow"})),
    ("отмени все будильники на завтра", "ru", ("cancel_all_alarms", {"day": "tomorrow"})),
    ("убери завтрашние будильники", "ru", ("cancel_all_alarms", {"day": "tomorrow"})),
    ("мне завтра не нужны будильники", "ru", ("cancel_all_alarms", {"day": "tomorrow"})),
    ("отключи будильник на завтра", "ru", ("cancel_alarm", {"day": "tomorrow"})),
    ("сними сегодняшний будильник", "ru", ("cancel_alarm", {"day": "today"})),
    ("завтра будильник не нужен", "ru", ("cancel_alarm", {"day": "tomorrow"})),
    ("завтра без будильника", "ru", ("cancel_alarm", {"day": "tomorrow"})),
    ("выключи будильник на завтра на семь", "ru", ("cancel_alarm", {"day": "tomorrow", "time": "07:00"})),
    ("कल का अलार्म हटा दो", "hi", ("cancel_alarm", {"day": "tomorrow"})),
    ("कल अलार्म मत बजाना", "hi", ("cancel_alarm", {"day": "tomorrow"})),
    ("aaj ka alarm cancel kar do", "hi", ("cancel_alarm", {"day": "today"})),
    ("kal mujhe alarm nahi chahiye", "hi", ("cancel_alarm", {"day": "tomorrow"})),
    ("कल के सारे अलार्म हटा दो", "hi", ("cancel_all_alarms", {"day": "tomorrow"})),
    ("kal ke saare alarm cancel kar do", "hi", ("cancel_all_alarms", {"day": "tomorrow"})),
])
def test_a_days_alarms_are_read_with_the_day(text: str, lang: str, call: tuple[str, dict[str, str]]) -> None:
    decision = alarm_fast_path().match(text, lang)
    assert decision is not None and [(c.name, c.arguments) for c in decision.calls] == [call], text


@pytest.mark.parametrize("text,lang", [("cancel all my alarms", "en"), ("отмени все будильники", "ru"),
                                       ("set an alarm for 7 tomorrow", "en"), ("cancel the 7 am alarm", "en")])
def test_no_day_is_read_where_none_was_said(text: str, lang: str) -> None:
    decision = alarm_fast_path().match(text, lang)
    assert decision is not None and all("day" not in c.arguments or c.name == "set_alarm" for c in decision.calls)


@pytest.mark.parametrize("lang,cancel,yes", [("en", "cancel all my alarms for tomorrow", "yes"),
                                             ("ru", "отмени все будильники на завтра", "да"),
                                             ("hi", "कल के सारे अलार्म हटा दो", "हाँ")])
def test_the_question_says_the_day_and_the_yes_keeps_the_other_days(base_config, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                   monkeypatch: pytest.MonkeyPatch, lang: str,
                                                                   cancel: str, yes: str) -> None:
    """Through the whole chain, the model never asked: the confirmation names tomorrow ("Cancel all your alarms for
    tomorrow?", where "cancel all your alarms?" would have taken every one), and the yes cancels tomorrow's only."""
    from hearthd.daemon.components import Components
    from hearthd.daemon.pipeline import Pipeline
    from hearthd.events import Trace
    from hearthd.locale import phrase

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    c = Components(base_config)
    evening = datetime(2026, 12, 1, 21, 0, tzinfo=BERLIN)
    c.alarms._now = lambda: evening
    monkeypatch.setattr(c, "agent", lambda: pytest.fail("the model was asked"))
    c.alarms.add("06:30", day="tomorrow")
    c.alarms.add("07:00", repeat="daily")
    c.alarms.add("22:00")  # tonight

    def say(text: str) -> str:
        return asyncio.run(Pipeline(c, Trace()).run_text(text, language=lang)).reply

    assert say(cancel) == phrase(lang, "confirm.cancel_all_alarms_tomorrow")
    assert len(c.alarms.pending()) == 3  # nothing before the yes
    assert say(yes) == phrase(lang, "alarm.day_off_tomorrow", times="6:30, 7:00")
    assert _rings(c.alarms) == [("Thu 03 07:00", "daily"), ("Tue 01 22:00", "")]


@pytest.mark.parametrize("lang,text", [("en", "don't wake me up tomorrow"), ("en", "no need to wake me tomorrow"),
                                       ("ru", "завтра не буди"), ("ru", "меня завтра будить не надо"),
                                       ("hi", "कल मुझे मत उठाना"), ("hi", "kal subah mat jagana")])
def test_told_not_to_wake_them_on_a_day_that_days_alarm_goes(base_config, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                            monkeypatch: pytest.MonkeyPatch, lang: str,
                                                            text: str) -> None:
    """"Don't wake me up tomorrow" asks for no alarm tomorrow (before, "All right, I'll leave it as it is", and the
    alarm rang): tomorrow's one-off goes, a daily one skips the day only, the others stay; with no day or time said
    nothing is done. The model is never asked."""
    from hearthd.daemon.components import Components
    from hearthd.daemon.pipeline import Pipeline
    from hearthd.events import Trace
    from hearthd.locale import phrase

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    c = Components(base_config)
    evening = datetime(2026, 12, 1, 21, 0, tzinfo=BERLIN)  # Tuesday
    c.alarms._now = lambda: evening
    monkeypatch.setattr(c, "agent", lambda: pytest.fail("the model was asked"))

    def say(said: str) -> str:
        return asyncio.run(Pipeline(c, Trace()).run_text(said, language=lang)).reply

    c.alarms.add("06:30", day="tomorrow")
    c.alarms.add("09:00", repeat="saturday")
    assert say(text) == phrase(lang, "alarm.day_off_tomorrow", times="6:30")
    assert _rings(c.alarms) == [("Sat 05 09:00", "saturday")]
    c.alarms.add("07:00", repeat="daily")
    say(text)
    assert _rings(c.alarms) == [("Sat 05 09:00", "saturday"), ("Thu 03 07:00", "daily")]  # Wednesday skipped
    assert say(text) == phrase(lang, "alarm.day_none_tomorrow")  # nothing left tomorrow: said so


@pytest.mark.parametrize("lang,text", [("en", "don't wake me up"), ("en", "don't set an alarm on weekdays"),
                                       ("ru", "не буди меня"), ("hi", "मुझे मत जगाना")])
def test_told_not_to_wake_them_with_no_day_or_time_leaves_the_alarms(lang: str, text: str) -> None:
    from hearthd.agent.fastpath import _not_then
    from hearthd.agent.split import told_not_to

    positive = told_not_to(text, lang)
    assert positive is not None
    read = alarm_fast_path().match(positive, lang)
    assert read is None or not read.calls or _not_then(read.calls[0]) is None


def test_a_dates_alarm_goes_and_a_repeat_only_skips_that_date(tmp_path: Path) -> None:
    """"Delete the alarm for Saturday": that Saturday's ring (before, the model's cancel_alarm with no day cancelled
    whichever alarm it found, or asked which)."""
    clock = Clock(datetime(2026, 12, 1, 22, 0, tzinfo=BERLIN))  # Tuesday evening
    book = AlarmBook(now=clock, path=tmp_path / "alarms.db")
    book.add("09:00", repeat="weekends")  # Saturday the 5th and Sunday the 6th, and on
    book.add("07:00", repeat="weekdays")  # not Saturday
    out = run(book.cancel_alarm({"date": "2026-12-05"}))
    assert out.ok and out.phrase == "alarm.day_off_repeat_date" and out.values["times"] == "9:00"
    assert out.spoken_values("en")["date"] == "December 5"
    weekend = next(a for a in book.pending() if a.repeat == "weekends")
    assert not book.rings_on(weekend, datetime(2026, 12, 5).date()) and book.rings_on(weekend,
                                                                                    datetime(2026, 12, 6).date())
    assert len(book.pending()) == 2  # both alarms kept: only one ring goes
    assert run(book.cancel_alarm({"date": "2026-12-03"})).phrase == "alarm.day_off_repeat_date"  # the weekday one
    assert run(book.cancel_alarm({"date": "2026-12-03"})).phrase == "alarm.day_none_date"  # said again: none left
    once = book.add("06:00", day="tomorrow")  # Wednesday the 2nd, once, beside the weekday alarm
    assert run(book.cancel_alarm({"date": "2026-12-02"})).phrase == "alarm.which"  # two ring then: which one?
    out = run(book.cancel_alarm({"date": "2026-12-02", "time": "06:00"}))
    assert out.phrase == "alarm.day_off_date" and once.id not in [a.id for a in book.pending()]
    assert sorted(a.hhmm for a in book.pending()) == ["07:00", "09:00"]


def test_a_day_asked_about_lists_that_days_alarms_only(tmp_path: Path) -> None:
    """"Is there an alarm tomorrow?" listed every alarm, whatever its day."""
    clock = Clock(datetime(2026, 12, 1, 22, 0, tzinfo=BERLIN))  # Tuesday evening
    book = AlarmBook(now=clock, path=tmp_path / "alarms.db")
    book.add("09:00", repeat="saturday")
    assert run(book.list_alarms({"day": "tomorrow"})).phrase == "alarm.day_none_tomorrow"
    said = run(book.list_alarms({"date": "2026-12-05"}))
    assert said.phrase == "alarm.list_one" and said.values["time"] == "9:00"
    assert run(book.list_alarms({"date": "2026-12-04"})).spoken_values("ru")["date"] == "4 декабря"
    assert run(book.list_alarms({})).phrase == "alarm.list_one"


@pytest.mark.parametrize("text,lang,date", [
    ("delete the alarm for saturday", "en", "saturday"),
    ("no alarm on sunday please", "en", "sunday"),
    ("удали будильник на субботу", "ru", "saturday"),
    ("в субботу будильник не нужен", "ru", "saturday"),
    ("शनिवार वाला अलार्म हटा दो", "hi", "saturday"),
])
def test_a_weekdays_alarm_is_read_with_its_date(text: str, lang: str, date: str) -> None:
    decision = alarm_fast_path().match(text, lang)
    assert decision is not None and [c.name for c in decision.calls] == ["cancel_alarm"], text
    arguments = decision.calls[0].arguments
    assert set(arguments) == {"date"}, arguments
    assert datetime.fromisoformat(arguments["date"]).strftime("%A").lower() == date


@pytest.mark.parametrize("text,lang,time", [("cancel the alarm for 7", "en", "07:00"),
                                            ("удали будильник на семь", "ru", "07:00"),
                                            ("सात बजे वाला अलार्म हटा दो", "hi", "07:00")])
def test_a_time_is_never_read_as_a_date(text: str, lang: str, time: str) -> None:
    decision = alarm_fast_path().match(text, lang)
    assert decision is not None and [(c.name, c.arguments) for c in decision.calls] == [
        ("cancel_alarm", {"time": time})], text


@pytest.mark.parametrize("text,lang,day", [
    ("what alarms do i have on saturday", "en", "saturday"),
    ("какие будильники на субботу", "ru", "saturday"),
    ("есть будильник на субботу?", "ru", "saturday"),
    ("शनिवार को कौन से अलार्म लगे हैं", "hi", "saturday"),
])
def test_a_weekdays_alarms_are_asked_about_with_its_date(text: str, lang: str, day: str) -> None:
    """(The model listed every alarm.)"""
    decision = alarm_fast_path().match(text, lang)
    assert decision is not None and [c.name for c in decision.calls] == ["list_alarms"], text
    (when,) = decision.calls[0].arguments.values()
    assert datetime.fromisoformat(when).strftime("%A").lower() == day
