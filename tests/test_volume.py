"""System volume through the sound server's client, against a real PulseAudio with a null sink (no sound card)."""

from __future__ import annotations

import re
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from hearthd.config import Config
from hearthd.daemon.components import Components
from hearthd.daemon.pipeline import Pipeline
from hearthd.events import EventType, Trace
from hearthd.locale import phrase
from hearthd.spoken import say_count
from hearthd.tools.volume import PactlVolume, WpctlVolume, volume_backend

from .dbus_mocks import MockPlayer, start_all, stop_all
from .services import pulseaudio


@pytest.fixture
def pulse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with pulseaudio(tmp_path) as server:
        if server is None:
            pytest.skip("pulseaudio is not installed (.ci/run installs it)")
        monkeypatch.setenv("PULSE_SERVER", server)
        yield server


def sink() -> tuple[int, bool]:
    """What the sound server itself says: (volume %, muted)."""
    volume = subprocess.run(["pactl", "get-sink-volume", "@DEFAULT_SINK@"], capture_output=True, text=True,
                            check=True).stdout
    mute = subprocess.run(["pactl", "get-sink-mute", "@DEFAULT_SINK@"], capture_output=True, text=True,
                          check=True).stdout
    return int(re.findall(r"(\d+)%", volume)[0]), "yes" in mute


@pytest.fixture
async def hearthd(dbus_config: Config) -> AsyncIterator[Pipeline]:
    dbus_config.audio.volume_backend = "pactl"
    pipeline = Pipeline(Components(dbus_config), Trace())
    yield pipeline
    await pipeline.c.bus.close()


async def say(pipeline: Pipeline, text: str) -> str:
    return (await pipeline.run_text(text)).reply


@pytest.mark.parametrize("lang,text", [("en", "set the volume to 40 percent"),
                                       ("ru", "поставь громкость на 40 процентов"),
                                       ("hi", "आवाज़ 40 प्रतिशत कर दो")])
async def test_set_volume_changes_the_default_sink(pulse: str, hearthd: Pipeline, lang: str, text: str) -> None:
    assert await say(hearthd, text) == phrase(lang, "volume.set", percent=say_count(40, "percent", lang))
    assert sink() == (40, False)


async def test_louder_quieter_mute_unmute(pulse: str, hearthd: Pipeline) -> None:
    await say(hearthd, "set the volume to 95 percent")
    assert await say(hearthd, "louder") == phrase("en", "volume.up", percent=say_count(100, "percent", "en"))
    assert sink() == (100, False)  # capped: never past 100 %
    assert await say(hearthd, "сделай потише") == phrase("ru", "volume.down", percent=say_count(90, "percent", "ru"))
    assert sink() == (90, False)
    assert await say(hearthd, "mute") == phrase("en", "volume.muted")
    assert sink() == (90, True)
    await say(hearthd, "louder")  # louder while muted: you want to hear it
    assert sink() == (100, False)
    await say(hearthd, "mute")
    assert await say(hearthd, "unmute") == phrase("en", "volume.unmuted") and sink() == (100, False)


async def test_no_sound_server_falls_back_to_the_players_volume(dbus_config: Config, dbus_address: str,
                                                                monkeypatch: pytest.MonkeyPatch,
                                                                tmp_path: Path) -> None:
    monkeypatch.setenv("PULSE_SERVER", f"unix:{tmp_path}/nothing-here")
    dbus_config.audio.volume_backend = "pactl"
    pipeline = Pipeline(Components(dbus_config), Trace())
    player = MockPlayer("vlc", status="Playing", volume=1.0)
    await start_all(dbus_address, player)
    try:
        assert await say(pipeline, "set the volume to 30 percent") == phrase(
            "en", "volume.set", percent=say_count(30, "percent", "en"))
        assert player.calls == [("Set", ("Volume", 0.3))]
        await stop_all(player)
        assert await say(pipeline, "volume to 20") == phrase("en", "unavailable.volume")
        assert await say(pipeline, "mute") == phrase("en", "unavailable.volume")
        (result,) = [e for e in pipeline.trace.of_type(EventType.TOOL_RESULT)][-1:]
        assert result.result["code"] == "dbus-service-missing"
    finally:
        await stop_all(player)
        await pipeline.c.bus.close()


def test_backend_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    real = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name: "/usr/bin/wpctl" if name == "wpctl" else real(name))
    assert isinstance(volume_backend("auto"), WpctlVolume)  # PipeWire's own client where it exists
    monkeypatch.setattr(shutil, "which", lambda name: None if name == "wpctl" else real(name))
    assert isinstance(volume_backend("auto"), PactlVolume)
    with pytest.raises(ValueError):
        volume_backend("alsamixer")


@pytest.mark.parametrize("lang,text", [("en", "what's the volume"), ("ru", "какая сейчас громкость"),
                                       ("hi", "आवाज़ कितनी है")])
async def test_the_volume_asked_after_is_said_and_left_as_it_is(pulse: str, hearthd: Pipeline, lang: str,
                                                                 text: str) -> None:
    """"What's the volume" was refused as a question about changing it (the templates read only changes)."""
    await say(hearthd, "set the volume to 35 percent")
    assert await say(hearthd, text) == phrase(lang, "volume.level", percent=say_count(35, "percent", lang))
    await say(hearthd, "mute")
    assert await say(hearthd, text) == phrase(lang, "volume.level_muted", percent=say_count(35, "percent", lang))
    assert sink() == (35, True)  # asked, not changed
