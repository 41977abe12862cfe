"""An alarm moved to another time ("move my 7 am alarm to 7:30", "перенеси будильник с семи на полвосьмого", "सात
बजे वाला अलार्म साढ़े सात का कर दो"): the same alarm rings then, keeping its name and days. Before, the model set a
second alarm and the first still rang."""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path

import pytest

from hearthd.tools.alarms import AlarmBook

from .test_alarms import BERLIN, Clock, run


def _rings(book: AlarmBook) -> list[tuple[str, str, str]]:
    return sorted((a.at.strftime("%a %d %H:%M"), a.repeat, a.label) for a in book.pending())


@pytest.mark.parametrize("lang,text", [("en", "move my 7am alarm to 7:30"),
                                       ("en", "change my alarm from 7 to half past seven"),
                                       ("ru", "перенеси будильник с семи на полвосьмого"),
                                       ("hi", "सात बजे वाला अलार्म साढ़े सात का कर दो"),
                                       ("hi", "mera alarm 7 se 7:30 baje ka kar do")])
def test_an_alarm_moved_keeps_its_days_and_name_and_no_second_one_is_set(base_config, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                        monkeypatch: pytest.MonkeyPatch, lang: str,
                                                                        text: str) -> None:
    from hearthd.daemon.components import Components
    from hearthd.daemon.pipeline import Pipeline
    from hearthd.events import Trace
    from hearthd.locale import phrase

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    c = Components(base_config)
    evening = datetime(2026, 12, 1, 21, 0, tzinfo=BERLIN)  # Tuesday
    c.alarms._now = lambda: evening
    monkeypatch.setattr(c, "agent", lambda: pytest.fail("the model was asked"))
    c.alarms.add("07:00", label="gym", repeat="weekdays")
    c.alarms.add("09:00", repeat="saturday")
    reply = asyncio.run(Pipeline(c, Trace()).run_text(text, language=lang)).reply
    assert reply == phrase(lang, "alarm.moved", time="7:00", new_time="7:30")
    assert _rings(c.alarms) == [("Sat 05 09:00", "saturday", ""), ("Wed 02 07:30", "weekdays", "gym")]


def test_a_repeat_moved_rings_at_its_new_time_on_its_next_days_too(tmp_path: Path) -> None:
    clock = Clock(datetime(2026, 12, 1, 21, 0, tzinfo=BERLIN))
    book = AlarmBook(now=clock, path=tmp_path / "alarms.db")
    book.add("07:00", repeat="daily")
    assert run(book.move_alarm({"new_time": "06:15"})).phrase == "alarm.moved"  # the only one: no time needed
    (alarm,) = book.pending()
    clock.now = datetime(2026, 12, 2, 6, 15, tzinfo=BERLIN)
    book.finish(alarm)  # rang on Wednesday: Thursday's ring is at the new time (the wall clock kept on disk)
    assert _rings(book) == [("Thu 03 06:15", "daily", "")]


def test_a_one_off_keeps_its_day_unless_the_new_time_of_it_is_past(tmp_path: Path) -> None:
    clock = Clock(datetime(2026, 12, 1, 21, 0, tzinfo=BERLIN))
    book = AlarmBook(now=clock, path=tmp_path / "alarms.db")
    book.add("23:00")  # tonight
    run(book.move_alarm({"time": "23:00", "new_time": "23:30"}))
    assert _rings(book) == [("Tue 01 23:30", "", "")]
    run(book.move_alarm({"new_time": "20:00"}))  # 8 pm tonight is past: tomorrow's 8 pm
    assert _rings(book) == [("Wed 02 20:00", "", "")]


def test_which_alarm_is_asked_and_none_is_said(tmp_path: Path) -> None:
    clock = Clock(datetime(2026, 12, 1, 21, 0, tzinfo=BERLIN))
    book = AlarmBook(now=clock, path=tmp_path / "alarms.db")
    assert run(book.move_alarm({"new_time": "07:30"})).phrase == "alarm.none"
    book.add("06:00")
    book.add("07:00")
    assert run(book.move_alarm({"new_time": "07:30"})).phrase == "alarm.which_move"
    assert run(book.move_alarm({"time": "08:00", "new_time": "07:30"})).phrase == "alarm.not_found"
    assert _rings(book) == [("Wed 02 06:00", "", ""), ("Wed 02 07:00", "", "")]  # nothing moved


def test_the_model_is_not_offered_the_move(tmp_path: Path) -> None:
    """Read from the templates only: the model's catalogue is unchanged."""
    from hearthd.tools.registry import ToolRegistry

    registry = ToolRegistry(AlarmBook(path=tmp_path / "alarms.db").tools())
    assert "move_alarm" in registry and "move_alarm" not in [t.name for t in registry.offered()]
