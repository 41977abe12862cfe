"""How people talk to a home (issue 16's requests), against the device simulator over a real mosquitto broker: in one
daemon, and through `hearthd ask` in its own process, in en, ru and hi."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import pytest

from hearthd.config import Config
from hearthd.events import EventType
from hearthd.locale import phrase
from hearthd.spoken import say_count

from .conversation import Conversation
from .mqtt_sim import DeviceSimulator
from .services import Broker
from .test_mqtt import home, mqtt_config  # noqa: F401 — the simulator fixtures (the broker: conftest)

# -- how people talk to a home, against the device simulator ---------------------------------------------------

async def _until(done: Any, timeout: float) -> None:
    async with asyncio.timeout(timeout):
        while not done():
            await asyncio.sleep(0.05)


async def test_what_people_ask_of_a_home_is_done_in_three_languages(mqtt_config: Config, home: DeviceSimulator) -> None:  # noqa: F811 — the fixtures imported above
    """Requests of the kinds people make (groups, dimming, colours, questions, the clock), read without the model, in
    a kitchen whose microphone is the local one: each reaches the right device, and the reply says what was done."""
    cfg = copy.deepcopy(mqtt_config)
    cfg.general.area = "Kitchen"
    h = Conversation(cfg)
    try:
        await home.wait_for_state("kitchen_light", state="ON")
        await h.components.mqtt_link().ready()
        await asyncio.sleep(0.2)
        assert await h.say("lower the lights please", "en") == phrase("en", "home.brightness", name="Kitchen Light",
                                                                   percent=say_count(75, "percent", "en"))
        assert await h.say("change the light to pink", "en") == phrase("en", "home.colour", name="Kitchen Light",
                                                                    colour=phrase("en", "colours.pink"))
        await home.wait_for_command(2)
        assert [json.loads(p) for p in home.commands_to("kitchen_light")] == [
            {"state": "ON", "brightness": round(254 * 0.75)}, {"state": "ON", "color": {"r": 255, "g": 105, "b": 180}}]
        home.commands.clear()
        reply = await h.say("выключи весь свет в доме", "ru")
        await home.wait_for_command(2)
        assert {d for d in ("kitchen_light", "living_room_lamp") if home.commands_to(d)} == {"kitchen_light",
                                                                                            "living_room_lamp"}
        assert reply == phrase("ru", "home.many_off", count=say_count(2, "light", "ru"))
        home.commands.clear()
        lights = h.components.catalogue.states
        await _until(lambda: all(v.get("state") == "off" for k, v in lights.items() if k.startswith("light.")), 5)
        # answered from the tracked state: the door is locked, and every light was just turned off
        assert await h.say("are any doors unlocked?", "en") == "No, none of the locks are unlocked."
        assert await h.say("कितनी लाइटें जल रही हैं?", "hi") == "कोई भी चालू नहीं है।"
        asked = [(c["name"], c["arguments"].get("question")) for c in h.events(EventType.TOOL_CALL)][-2:]
        assert asked == [("device_state", "any"), ("device_state", "how_many")]
        assert await h.say("what time is it?", "en")
        assert home.commands == []  # the questions changed nothing
    finally:
        await h.close()


@pytest.mark.parametrize("lang,text,device,payload,reply", [
    ("en", "change the light to pink", "kitchen_light", {"state": "ON", "color": {"r": 255, "g": 105, "b": 180}},
     ("home.colour", {"name": "Kitchen Light", "colour": ("colours.pink", {})})),
    ("ru", "приглуши свет", "kitchen_light", {"state": "ON", "brightness": round(254 * 0.75)},
     ("home.brightness", {"name": "Kitchen Light", "percent": (75, "percent")})),
    ("hi", "सारी लाइटें बंद कर दो", "kitchen_light", {"state": "OFF"}, None),
])
async def test_hearthd_ask_does_what_people_ask_of_a_home(broker: Broker, home: DeviceSimulator, tmp_path: Path,  # noqa: F811 — the fixtures imported above
                                                           lang: str, text: str, device: str, payload: dict[str, Any],
                                                           reply: Any) -> None:
    """`hearthd ask` in its own process, from the kitchen: a colour, a dimmer, the home's lights, in three languages."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
           "HEARTHD__MQTT__PORT": str(broker.port), "HEARTHD__DBUS__ENABLED": "false",
           "HEARTHD__GENERAL__AREA": "Kitchen"}
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "hearthd", "ask", text, "--json", env=env,
                                                cwd=Path(__file__).resolve().parent.parent, stdout=subprocess.PIPE)
    out, _ = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, out
    events = [json.loads(line) for line in out.decode().splitlines() if line.startswith("{")]
    (said,) = [e["text"] for e in events if e["type"] == "reply"]
    await home.wait_for_command()
    assert json.loads(home.commands_to(device)[0]) == payload
    if reply is not None:
        key, values = reply
        spoken = {k: phrase(lang, v[0]) if isinstance(v, tuple) and isinstance(v[1], dict) else
                  say_count(v[0], v[1], lang) if isinstance(v, tuple) else v for k, v in values.items()}
        assert said == phrase(lang, key, **spoken)
    else:
        assert home.commands_to("living_room_lamp")  # every light of the home, not only the kitchen's
