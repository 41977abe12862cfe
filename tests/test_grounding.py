"""Grounding of named things: a device or door counts as said only when a word that names it was said."""

from __future__ import annotations

import json

import pytest

from hearthd.agent.grounding import name_is_grounded


@pytest.mark.parametrize("value,utterance,lang,said", [
    ("kitchen light", "turn on the kitchen light", "en", True),
    ("kitchen light", "switch on the lights in the bathroom", "en", False),  # "light" names every light
    ("front door", "open the garage door", "en", False),  # "door" names every door
    ("front door", "lock the front door", "en", True),
    ("back door", "lock the back door", "en", True),
    ("kitchen light", "включи свет на кухне", "ru", True),
    ("kitchen light", "включи свет в ванной", "ru", False),
    ("front door", "заблокируй этот номер", "ru", False),
    ("front door", "закрой входную дверь на ключ", "ru", True),  # входную / входная: one stem
    ("bedroom light", "сделай так, чтобы в спальне было светло", "ru", True),
    ("tv", "включи телевизор", "ru", True),
    ("desk lamp", "настольная лампа на 60 процентов яркости", "ru", True),
    ("living room light", "настольная лампа на 60 процентов", "ru", False),
    ("kitchen light", "kitchen ki light on karo", "hi", True),  # English names in Hinglish
    ("fan", "पंखा चला दो", "hi", True),
    ("heater", "मुझे ठंड लग रही है", "hi", False),
    ("heater", "thodi thand lag rahi hai, heater chala do", "hi", True),
    ("front door", "मेन दरवाज़ा खोल दो", "hi", True),
])
def test_a_named_thing_must_be_said(value: str, utterance: str, lang: str, said: bool) -> None:
    assert name_is_grounded(value, utterance, lang) is said


@pytest.mark.parametrize("tool,utterance,lang,read", [
    ("set_alarm", "सुबह पाँच बजे उठना है, अलार्म लगा दो", "hi", {"time": "05:00"}),  # सुबह is no day or repeat
    ("set_alarm", "कल सुबह आठ बजे का अलार्म", "hi", {"time": "08:00", "day": "tomorrow"}),
    ("set_alarm", "रोज़ सुबह छह बजे", "hi", {"time": "06:00", "repeat": "daily"}),
    ("set_alarm", "hey can you wake me up at 7 tomorrow", "en", {"time": "07:00", "day": "tomorrow"}),
    ("set_alarm", "wake me at 7 every weekday", "en", {"time": "07:00", "repeat": "weekdays"}),  # not weekends
    ("turn_on", "включи свет в спальне", "ru", {}),  # the bedroom light or the bedroom heater: the model decides
    ("turn_on", "kitchen ki light on karo", "hi", {"device": "kitchen light"}),
    ("set_timer", "a pasta timer for 12 minutes", "en", {"seconds": 720}),
])
def test_arguments_said_once_are_read_by_code(tool: str, utterance: str, lang: str, read: dict) -> None:  # type: ignore[type-arg]
    from pathlib import Path

    from hearthd.agent.grounding import read_arguments
    from hearthd.evaluation.evaluate import load_catalogue

    catalogue = load_catalogue(Path(__file__).parent / "data" / "commands" / "tools.yaml")
    assert read_arguments(catalogue.get(tool), utterance, lang) == read


def test_an_invented_optional_detail_is_dropped_and_an_invented_required_one_refused() -> None:
    from pathlib import Path

    from hearthd.agent.agent import Agent
    from hearthd.evaluation.evaluate import load_catalogue

    agent = Agent.__new__(Agent)
    agent.registry = load_catalogue(Path(__file__).parent / "data" / "commands" / "tools.yaml")
    said = "um set an alarm for uh 7 30 a.m."
    invented = '{"name": "set_alarm", "arguments": {"time": "07:30", "repeat": "daily", "day": "tomorrow"}}'
    out = agent.check(f"<tool_call>\n{invented}\n</tool_call>", said, "en")
    assert (out.kind, [(c.name, c.arguments) for c in out.calls]) == ("call", [("set_alarm", {"time": "07:30"})])
    wrong_hour = '{"name": "set_alarm", "arguments": {"time": "09:30"}}'
    assert agent.check(f"<tool_call>\n{wrong_hour}\n</tool_call>", said, "en").kind == "abstain"


@pytest.mark.parametrize("said,lang,tool,written,missing", [
    ("could you switch on the", "en", "turn_on", {"device": "desk lamp"}, "device"),  # a name nobody said: ask which
    ("выключи", "ru", "turn_off", {"device": "kitchen light"}, "device"),
    ("um set an alarm for uh 7 30 a.m.", "en", "set_alarm", {"time": "09:30"}, ""),  # a wrong hour: no question
])
def test_a_name_the_model_made_up_is_what_to_ask_for(said: str, lang: str, tool: str, written: dict,  # type: ignore[type-arg]
                                                     missing: str) -> None:
    """A required name the user did not say is refused and marked as missing (the agent asks "Which device?"); a
    value that contradicts what was said is refused and asks nothing."""
    from pathlib import Path

    from hearthd.agent.agent import Agent
    from hearthd.evaluation.evaluate import load_catalogue

    agent = Agent.__new__(Agent)
    agent.registry = load_catalogue(Path(__file__).parent / "data" / "commands" / "tools.yaml")
    call = json.dumps({"name": tool, "arguments": written})
    out = agent.check(f"<tool_call>\n{call}\n</tool_call>", said, lang)
    assert (out.kind, out.missing) == ("abstain", missing)


@pytest.mark.parametrize("said,lang,temperature,kept", [
    ("термостат на двадцать один", "ru", 21, True),
    ("thermostat to nineteen and a half please", "en", 19.5, True),
    ("टेम्परेचर बाईस डिग्री कर दो", "hi", 22, True),
    ("сделай потеплее, градусов двадцать три", "ru", 32, False),  # a number misread
    ("it's freezing in here", "en", 25, False),  # no number said: the model's default is no one's wish
    ("पंखा बंद करो, ठंड लग रही है", "hi", 25, False),
    ("change it to 7:30", "en", 7, False),  # a time of day is no temperature: the heating would have gone to 7 °C
    ("change it to 7:30", "en", 30, False),
    ("thermostat to 7 at 7:30", "en", 7, True),  # the 7 said alone still is one
])
def test_a_temperature_is_one_the_user_said(said: str, lang: str, temperature: float, kept: bool) -> None:
    """The model, told the home's domain, fills a thermostat's target with a number of its own when none was said;
    a temperature must be a number said (in words or digits, or one and a half), or the call is not made."""
    from pathlib import Path

    from hearthd.agent.agent import Agent
    from hearthd.evaluation.evaluate import load_home

    agent = Agent.__new__(Agent)
    agent.registry = load_home(Path(__file__).parent / "data" / "commands" / "home.yaml").registry
    call = json.dumps({"name": "set_temperature", "arguments": {"temperature": temperature}})
    out = agent.check(f"<tool_call>\n{call}\n</tool_call>", said, lang)
    assert (out.kind == "call") == kept, out.reason


@pytest.mark.parametrize("tool,said,lang,percent,kept", [
    ("set_volume", "громкость на сорок процентов", "ru", 40, True),
    ("set_volume", "громкость насороть процентов", "ru", 50, False),  # "сорок" misheard: no level said
    ("set_brightness", "kitchen light at full brightness", "en", 100, True),  # a level word
    ("set_brightness", "बेडरूम की लाइट जला दो", "hi", 50, False),
])
def test_a_level_is_one_the_user_said(tool: str, said: str, lang: str, percent: int, kept: bool) -> None:
    """A volume or brightness level the model writes must be a number or a level word said (its usual default, 50,
    was written for misheard words in the spoken suites)."""
    from pathlib import Path

    from hearthd.agent.agent import Agent
    from hearthd.evaluation.evaluate import load_home

    agent = Agent.__new__(Agent)
    agent.registry = load_home(Path(__file__).parent / "data" / "commands" / "home.yaml").registry
    arguments: dict[str, object] = {"percent": percent}
    if tool == "set_brightness":
        arguments["device"] = "Kitchen Light"
    call = json.dumps({"name": tool, "arguments": arguments})
    out = agent.check(f"<tool_call>\n{call}\n</tool_call>", said, lang)
    assert ("percent" not in out.reason) == kept, out.reason
