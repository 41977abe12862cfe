"""The screen made brighter or dimmer without a number ("dim the screen", "сделай экран ярче", "स्क्रीन की
ब्राइटनेस कम करो"): a step from where the backlight is (the handler: tests/test_dbus.py). These went to the model, whose
screen_brightness needs a percent, and ended in "what do you want to do with the computer?". "Turn up the
brightness", naming nothing, is this room's lights where the home has lights, else the screen."""

from __future__ import annotations

import pytest

from hearthd.daemon.components import Components

from .spoken_home import decide

STEPS = [("en", "dim the screen", "down"), ("en", "make the screen brighter", "up"),
         ("en", "could you turn the screen brightness down a bit", "down"), ("en", "the screen is too bright", "down"),
         ("en", "brighten up my display a little", "up"), ("en", "lower the brightness of the monitor", "down"),
         ("ru", "сделай экран ярче", "up"), ("ru", "убавь яркость экрана", "down"), ("ru", "приглуши экран", "down"),
         ("ru", "экран слишком тёмный", "up"), ("ru", "сделай яркость монитора поменьше", "down"),
         ("hi", "स्क्रीन की ब्राइटनेस कम करो", "down"), ("hi", "स्क्रीन की चमक थोड़ी बढ़ा दो", "up"),
         ("hi", "screen brightness thodi badha do", "up"), ("hi", "screen dim kar do", "down")]


@pytest.mark.parametrize("lang,text,step", STEPS)
def test_the_screen_brighter_or_dimmer_is_a_step(living_room: Components, lang: str, text: str, step: str) -> None:
    decision = decide(living_room, text, lang)
    assert (decision.kind, decision.source) == ("call", "fastpath"), decision
    assert [(c.name, c.arguments) for c in decision.calls] == [("screen_brightness", {"step": step})]


def test_how_bright_not_said_is_asked(living_room: Components) -> None:
    decision = decide(living_room, "could you adjust the screen brightness", "en")
    assert (decision.kind, decision.missing, [c.name for c in decision.calls]) == (
        "clarify", "percent", ["screen_brightness"])


@pytest.mark.parametrize("text,step", [("turn up the brightness", "up"), ("turn the brightness down a bit", "down")])
def test_the_brightness_of_nothing_named_is_the_lights_where_there_are_lights(living_room: Components,
                                                                            components: Components, text: str,
                                                                            step: str) -> None:
    lit = decide(living_room, text, "en")
    assert [(c.name, c.arguments.get("step"), c.arguments.get("area")) for c in lit.calls] == [
        ("set_brightness", step, "Living Room")], lit
    bare = decide(components, text, "en")  # the shipped default: no smart home
    assert [(c.name, c.arguments) for c in bare.calls] == [("screen_brightness", {"step": step})], bare
