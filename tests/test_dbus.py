"""Device control over D-Bus, on a private dbus-daemon with mock freedesktop services exported on it.

Each test asserts the exact method calls hearthd makes, that consequential ones wait for a spoken yes, and what
the user hears when a service is absent or refuses — in English, Russian and Hindi. Every request here is one
the fast path knows, so no model loads.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hearthd.config import Config
from hearthd.events import EventType
from hearthd.locale import phrase
from hearthd.spoken import say_count, say_duration

from .conversation import Conversation
from .dbus_mocks import (
    MockLogin1,
    MockNetworkManager,
    MockNotifications,
    MockPlayer,
    MockUPower,
    start_all,
    stop_all,
)

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
async def hearthd(dbus_config: Config) -> AsyncIterator[Conversation]:
    assistant = Conversation(dbus_config)
    yield assistant
    await assistant.close()


@pytest.fixture
async def players(dbus_address: str) -> AsyncIterator[tuple[MockPlayer, MockPlayer]]:
    """Two players: vlc paused (started first), spotify playing (started last)."""
    vlc = MockPlayer("vlc", status="Paused", title="Old Song", artist="Someone")
    spotify = MockPlayer("spotify", status="Playing", title="Kalinka", artist="Red Army Choir")
    await start_all(dbus_address, vlc, spotify)
    yield vlc, spotify
    await stop_all(vlc, spotify)


@pytest.fixture
async def login1(dbus_address: str) -> AsyncIterator[MockLogin1]:
    mock = MockLogin1()
    await mock.start(dbus_address)
    yield mock
    await mock.stop()


@pytest.fixture
async def upower(dbus_address: str) -> AsyncIterator[MockUPower]:
    mock = MockUPower(percentage=57.0, state=2, time_to_empty=5410)
    await mock.start(dbus_address)
    yield mock
    await mock.stop()


@pytest.fixture
async def network(dbus_address: str) -> AsyncIterator[MockNetworkManager]:
    mock = MockNetworkManager(wireless_enabled=True, connection="HomeWiFi")
    await mock.start(dbus_address)
    yield mock
    await mock.stop()


@pytest.fixture
async def notifications(dbus_address: str) -> AsyncIterator[MockNotifications]:
    mock = MockNotifications()
    await mock.start(dbus_address)
    yield mock
    await mock.stop()


PAUSE = {"en": "pause the music", "ru": "поставь музыку на паузу", "hi": "गाना रोको"}
POWER_OFF = {"en": "shut down the computer", "ru": "выключи компьютер", "hi": "कंप्यूटर बंद करो"}
YES = {"en": "yes", "ru": "да", "hi": "हाँ"}
NO = {"en": "no", "ru": "нет", "hi": "नहीं"}
LANGS = ["en", "ru", "hi"]


# -- media (MPRIS) ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
async def test_pause_the_music_pauses_the_player_that_is_playing(hearthd: Conversation, players, lang: str) -> None:
    vlc, spotify = players
    reply = await hearthd.say(PAUSE[lang])
    assert spotify.calls_to("Pause") == [()] and spotify.status == "Paused"
    assert vlc.calls == []  # the paused one is left alone
    assert reply == phrase(lang, "media.pause")


async def test_play_resumes_the_player_last_controlled_and_next_goes_to_it(hearthd: Conversation, players) -> None:
    vlc, spotify = players
    await hearthd.say("pause the music")  # now nothing plays; spotify was the one controlled last
    assert await hearthd.say("resume the music") == phrase("en", "media.play")
    assert spotify.calls_to("Play") == [()] and vlc.calls == []
    await hearthd.say("next song")
    assert spotify.calls_to("Next") == [()]


async def test_with_nothing_playing_the_newest_player_is_meant(hearthd: Conversation, dbus_address: str) -> None:
    older, newer = MockPlayer("vlc", status="Paused"), MockPlayer("mpv", status="Paused")
    await start_all(dbus_address, older, newer)
    try:
        await hearthd.say("previous track")
        assert newer.calls_to("Previous") == [()] and older.calls == []
    finally:
        await stop_all(older, newer)


@pytest.mark.parametrize("lang,text", [("en", "put on some jazz"), ("en", "could you play me a bit of classical music"),
                                       ("en", "I'd like to listen to some rock"), ("ru", "включи джаз"),
                                       ("ru", "поставь какую-нибудь спокойную музыку"), ("ru", "хочу послушать рок"),
                                       ("ru", "врубай рок"),
                                       ("hi", "जैज़ लगाओ"), ("hi", "kuch purane gaane chalao")])
async def test_music_of_a_kind_plays_and_says_the_kind_was_not_chosen(hearthd: Conversation, players, lang: str,
                                                                       text: str) -> None:
    """"Put on some jazz" was refused, or read as an alarm or a device called "джаз". The player can be told to play,
    never what: it plays, and the reply says so."""
    vlc, spotify = players
    await hearthd.say(PAUSE[lang])
    assert await hearthd.say(text, lang) == phrase(lang, "media.play_genre")
    assert spotify.calls_to("Play") == [()] and spotify.status == "Playing" and vlc.calls == []


@pytest.mark.parametrize("lang", LANGS)
async def test_music_of_a_kind_with_no_player_is_not_available(hearthd: Conversation, lang: str) -> None:
    text = {"en": "play some jazz", "ru": "включи рок", "hi": "पुराने गाने चलाओ"}[lang]
    assert await hearthd.say(text, lang) == phrase(lang, "unavailable.media")


@pytest.mark.parametrize("lang,question", [("en", "what's playing"), ("ru", "что сейчас играет"),
                                           ("hi", "कौन सा गाना चल रहा है")])
async def test_what_is_playing_names_song_and_artist(hearthd: Conversation, players, lang: str, question: str) -> None:
    reply = await hearthd.say(question)
    assert reply == phrase(lang, "media.now_playing", title="Kalinka", artist="Red Army Choir")


async def test_nothing_playing_is_said_so(hearthd: Conversation, dbus_address: str) -> None:
    idle = MockPlayer("vlc", status="Stopped", title="", artist="")
    await start_all(dbus_address, idle)
    try:
        assert await hearthd.say("what's playing") == phrase("en", "media.nothing_playing")
    finally:
        await stop_all(idle)


@pytest.mark.parametrize("lang", LANGS)
async def test_no_media_player_is_not_available_here(hearthd: Conversation, lang: str) -> None:
    reply = await hearthd.say(PAUSE[lang])
    assert reply == phrase(lang, "unavailable.media")
    (result,) = hearthd.events(EventType.TOOL_RESULT)
    assert result["ok"] is False and result["result"]["code"] == "dbus-service-missing"


@pytest.mark.parametrize("lang", LANGS)
async def test_a_player_that_refuses_is_reported(hearthd: Conversation, players, lang: str) -> None:
    _, spotify = players
    spotify.fail = "org.freedesktop.DBus.Error.AccessDenied"
    assert await hearthd.say(PAUSE[lang]) == phrase(lang, "failed.media")
    assert spotify.calls_to("Pause") == [()]


# -- power and screen (login1) ---------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
async def test_shut_down_asks_first_and_powers_off_only_on_yes(hearthd: Conversation, login1: MockLogin1,
                                                               lang: str) -> None:
    question = await hearthd.say(POWER_OFF[lang])
    assert question == phrase(lang, "confirm.power_off")
    assert login1.calls == []  # nothing happens before the answer
    assert await hearthd.say(YES[lang]) == phrase(lang, "power.power_off")
    assert login1.calls == [("PowerOff", (False,))]


@pytest.mark.parametrize("lang", LANGS)
async def test_shut_down_answered_no_does_nothing(hearthd: Conversation, login1: MockLogin1, lang: str) -> None:
    await hearthd.say(POWER_OFF[lang])
    assert await hearthd.say(NO[lang]) == phrase(lang, "confirm.cancelled")
    assert login1.calls == []


async def test_reboot_after_yes_without_logind_is_not_available(hearthd: Conversation) -> None:
    assert await hearthd.say("restart the computer") == phrase("en", "confirm.reboot")
    assert await hearthd.say("yes") == phrase("en", "unavailable.power")


async def test_refused_power_off_is_reported(hearthd: Conversation, login1: MockLogin1) -> None:
    login1.fail = "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired"
    await hearthd.say("выключи компьютер")
    assert await hearthd.say("да") == phrase("ru", "failed.power")


async def test_suspend_and_lock_screen(hearthd: Conversation, login1: MockLogin1) -> None:
    assert await hearthd.say("put the computer to sleep") == phrase("en", "power.suspend")
    assert await hearthd.say("lock the screen") == phrase("en", "screen.locked")
    assert login1.calls_to("Suspend") == [(False,)]
    assert login1.calls_to("GetUser") == [(os.getuid(),)]
    assert login1.calls_to("Lock") == [()]


async def test_lock_screen_without_a_graphical_session(dbus_config: Config, dbus_address: str) -> None:
    mock = MockLogin1(with_user_display=False)
    await mock.start(dbus_address)
    assistant = Conversation(dbus_config)
    try:
        assert await assistant.say("заблокируй экран") == phrase("ru", "unavailable.screen")
        assert mock.calls_to("Lock") == []
    finally:
        await assistant.close()
        await mock.stop()


async def test_screen_brightness_goes_through_the_session(dbus_config: Config, login1: MockLogin1,
                                                          tmp_path: Path) -> None:
    device = tmp_path / "intel_backlight"
    device.mkdir()
    (device / "max_brightness").write_text("1200\n")
    dbus_config.dbus.backlight = str(device)
    assistant = Conversation(dbus_config)
    try:
        reply = await assistant.say("set the screen brightness to 40 percent")
        assert login1.calls_to("SetBrightness") == [("backlight", "intel_backlight", 480)]
        assert reply == phrase("en", "screen.brightness", percent=say_count(40, "percent", "en"))
    finally:
        await assistant.close()


async def test_the_screen_dimmed_or_brightened_steps_from_where_it_is(dbus_config: Config, login1: MockLogin1,
                                                                     tmp_path: Path) -> None:
    """"Dim the screen", "сделай экран ярче", "स्क्रीन की ब्राइटनेस कम करो": a fifth of the range from the backlight's
    brightness now (sysfs), never down to black; unread, it is not guessed."""
    device = tmp_path / "intel_backlight"
    device.mkdir()
    (device / "max_brightness").write_text("1200\n")
    (device / "actual_brightness").write_text("600\n")  # 50 %
    dbus_config.dbus.backlight = str(device)
    assistant = Conversation(dbus_config)
    try:
        assert await assistant.say("dim the screen") == phrase("en", "screen.brightness",
                                                               percent=say_count(30, "percent", "en"))
        assert await assistant.say("сделай экран ярче") == phrase("ru", "screen.brightness",
                                                                   percent=say_count(70, "percent", "ru"))
        (device / "actual_brightness").write_text("120\n")  # 10 %
        assert await assistant.say("स्क्रीन की ब्राइटनेस कम करो") == phrase("hi", "screen.brightness",
                                                                        percent=say_count(5, "percent", "hi"))
        assert login1.calls_to("SetBrightness") == [("backlight", "intel_backlight", 360),
                                                    ("backlight", "intel_backlight", 840),
                                                    ("backlight", "intel_backlight", 60)]
        (device / "actual_brightness").unlink()
        assert await assistant.say("turn the screen brightness up") == phrase("en", "screen.level_unknown")
        assert await assistant.say("set the screen brightness") == phrase("en", "ask.percent")
        assert len(login1.calls_to("SetBrightness")) == 3
        # a call with neither (no sentence makes one; the model's must give the percent): said what is needed
        neither = await assistant.components.tools.get("screen_brightness").handler({})
        assert (neither.ok, neither.phrase) == (False, "screen.level_missing")
    finally:
        await assistant.close()


# -- battery (UPower) --------------------------------------------------------------------------------------------

BATTERY = {"en": "how much battery is left", "ru": "сколько осталось заряда", "hi": "बैटरी कितनी है"}


@pytest.mark.parametrize("lang", LANGS)
async def test_battery_level_and_time_left(hearthd: Conversation, upower: MockUPower, lang: str) -> None:
    reply = await hearthd.say(BATTERY[lang])
    # 5410 s is said to the minute: one hour thirty minutes
    assert reply == phrase(lang, "battery.discharging", percent=say_count(57, "percent", lang),
                           duration=say_duration(5400, lang))


async def test_battery_charging_full_and_absent(hearthd: Conversation, upower: MockUPower) -> None:
    upower.update(state=1, percentage=80.0, time_to_full=1200)
    assert await hearthd.say("what's the battery level") == phrase(
        "en", "battery.charging", percent=say_count(80, "percent", "en"), duration=say_duration(1200, "en"))
    upower.update(state=4, percentage=100.0)
    assert await hearthd.say("what's the battery level") == phrase("en", "battery.full")
    upower.update(is_present=False)
    assert await hearthd.say("what's the battery level") == phrase("en", "battery.none")


@pytest.mark.parametrize("lang", LANGS)
async def test_no_upower_is_not_available(hearthd: Conversation, lang: str) -> None:
    assert await hearthd.say(BATTERY[lang]) == phrase(lang, "unavailable.battery")


# -- Wi-Fi (NetworkManager) --------------------------------------------------------------------------------------

WIFI_OFF = {"en": "turn off the wifi", "ru": "выключи вайфай", "hi": "वाईफाई बंद करो"}


@pytest.mark.parametrize("lang", LANGS)
async def test_wifi_off_asks_first(hearthd: Conversation, network: MockNetworkManager, lang: str) -> None:
    assert await hearthd.say(WIFI_OFF[lang]) == phrase(lang, "confirm.wifi_off")
    assert network.calls == []
    assert await hearthd.say(YES[lang]) == phrase(lang, "network.wifi_off")
    assert network.calls == [("Set", ("WirelessEnabled", False))]
    assert await hearthd.say(WIFI_OFF[lang]) == phrase(lang, "confirm.wifi_off")  # a yes is never remembered
    assert await hearthd.say(NO[lang]) == phrase(lang, "confirm.cancelled")
    assert network.calls == [("Set", ("WirelessEnabled", False))]


async def test_wifi_on_and_the_current_connection(hearthd: Conversation, network: MockNetworkManager) -> None:
    assert await hearthd.say("which wifi am I on") == phrase("en", "network.connected", name="HomeWiFi")
    network.update(wireless_enabled=False)
    assert await hearthd.say("which wifi am I on") == phrase("en", "network.disconnected")
    assert await hearthd.say("turn on the wifi") == phrase("en", "network.wifi_on")
    assert network.calls == [("Set", ("WirelessEnabled", True))]


# -- notifications ---------------------------------------------------------------------------------------------


async def test_actions_and_questions_show_notifications(hearthd: Conversation, players, login1: MockLogin1,
                                                        notifications: MockNotifications) -> None:
    await hearthd.say("pause the music")
    await hearthd.say("выключи компьютер")
    await hearthd.say("да")
    notes = notifications.calls_to("Notify")
    assert [(n[3], n[4]) for n in notes] == [
        (phrase("en", "notify.action"), phrase("en", "media.pause")),
        (phrase("ru", "notify.confirm"), phrase("ru", "confirm.power_off")),
        (phrase("ru", "notify.action"), phrase("ru", "power.power_off")),
    ]
    assert notes[2][1] == 2  # the outcome replaces the question instead of piling up
    assert len(hearthd.events(EventType.NOTIFY)) == 3


async def test_no_notification_server_changes_nothing(hearthd: Conversation, players) -> None:
    assert await hearthd.say("pause the music") == phrase("en", "media.pause")
    assert hearthd.events(EventType.NOTIFY) == []


# -- the command line, as a user runs it -------------------------------------------------------------------------


def test_hearthd_ask_pauses_the_mpris_player(dbus_address: str, tmp_path: Path) -> None:
    """`hearthd ask "pause the music"` in its own process, against a player on the session bus."""
    import asyncio

    async def scenario() -> list:
        player = MockPlayer("vlc", status="Playing")
        await start_all(dbus_address, player)
        try:
            env = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": dbus_address, "DBUS_SYSTEM_BUS_ADDRESS": dbus_address,
                   "XDG_CONFIG_HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}
            proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "hearthd", "ask", "pause the music",
                                                        "--json", env=env, cwd=ROOT, stdout=subprocess.PIPE)
            out, _ = await asyncio.wait_for(proc.communicate(), 120)
            assert proc.returncode == 0, out
            assert b'"tool_call"' in out and b'"media"' in out
            return player.calls
        finally:
            await stop_all(player)

    assert asyncio.run(scenario()) == [("Pause", ())]
