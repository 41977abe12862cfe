"""Requests said the way people say them at home that went to the model and came back refused or wrong: the music
switched off ("turn the music off", "вырубай музыку": the model's turn_off of a device called "music", or a refusal),
the blinds of a room asked about ("are the blinds open in the bedroom?": the model's open_cover, refused as a
question), and how long until the alarm ("сколько осталось до будильника": the model's timer), "अलार्म कितने बजे का
है" (no tool found)."""

from __future__ import annotations

from typing import Any

import pytest

from hearthd.daemon.components import Components

from .spoken_home import decide

CASES = [
    ("en", "turn the music off", "media", {"action": "pause"}),
    ("en", "kill the music", "media", {"action": "pause"}),
    ("en", "could you switch off the music please", "media", {"action": "pause"}),
    ("ru", "выключи музыку", "media", {"action": "pause"}),
    ("ru", "вырубай музыку", "media", {"action": "pause"}),
    ("en", "are the blinds open in the bedroom", "device_state",
     {"area": "Bedroom", "domain": "cover", "state": "open", "question": "any"}),
    ("en", "are the curtains closed in the living room", "device_state",
     {"area": "Living Room", "domain": "cover", "state": "closed", "question": "all"}),
    ("en", "are the lights on in the kitchen", "device_state",
     {"area": "Kitchen", "domain": "light", "state": "on", "question": "any"}),
    ("ru", "сколько осталось до будильника", "list_alarms", {}),
    ("hi", "अलार्म कितने बजे का है", "list_alarms", {}),
    ("hi", "alarm kitne baje ka laga hai", "list_alarms", {}),
    ("ru", "а можно свет потусклее", "set_brightness", {"step": "down", "area": "Living Room"}),
    ("ru", "можно свет чуть ярче", "set_brightness", {"step": "up", "area": "Living Room"}),
    ("ru", "на сколько заряжен ноутбук", "battery_status", {}),
    ("ru", "насколько заряжена батарея", "battery_status", {}),
    # a cover halfway: "halfway" was heard by the tolerant tier as the hallway, and its blinds closed
    ("en", "close the blinds halfway", "set_cover_position", {"device": "blinds", "percent": 50}),
    ("en", "could you lower the blinds half way down", "set_cover_position", {"device": "blinds", "percent": 50}),
    ("en", "open the garage door part of the way", "set_cover_position", {"device": "garage door", "percent": 50}),
    ("hi", "पर्दे आधे बंद करो", "set_cover_position", {"device": "curtains", "percent": 50}),
    ("hi", "blinds aadhe band kar do", "set_cover_position", {"device": "blinds", "percent": 50}),
    # a temperature past 35 (the model chose the lights' brightness at 72 %)
    ("en", "set the thermostat to seventy two", "set_temperature", {"temperature": 72.0, "device": "Thermostat"}),
    ("ru", "поставь термостат на семьдесят", "set_temperature", {"temperature": 70}),
    # a timer's name and its length with no word between (the model dropped the name)
    ("en", "set a timer for pasta 10 minutes", "set_timer", {"label": "pasta", "seconds": 600}),
    ("en", "start a timer for the rice, twenty minutes", "set_timer", {"label": "rice", "seconds": 1200}),
    ("en", "make a timer for my tea three minutes", "set_timer", {"label": "tea", "seconds": 180}),
    ("ru", "поставь таймер на пельмени на восемь минут", "set_timer", {"label": "пельмени", "seconds": 480}),
    ("ru", "поставь таймер на десять минут на пиццу", "set_timer", {"seconds": 600, "label": "пиццу"}),
    # the light put on, as much of England says it, in a room
    ("en", "put the lights on in the hall", "turn_on", {"device": "Hallway Light"}),
    ("en", "put the light out in the bedroom", "turn_off", {"device": "Bedroom Light"}),
    # the sound off
    ("en", "mute yourself", "mute", {}),
    ("en", "turn the sound off", "mute", {}),
    ("en", "mute everything", "mute", {}),
    # what a plug-switched machine makes, asked for
    ("en", "make me a coffee", "turn_on", {"device": "Coffee Machine"}),
    ("en", "could you brew some coffee", "turn_on", {"device": "Coffee Machine"}),
    # a nap of so long: a timer named for it (refused as a time said without an alarm)
    ("en", "i want to take a 20 minute nap", "set_timer", {"seconds": 1200, "label": "nap"}),
    ("en", "let me nap for half an hour", "set_timer", {"seconds": 1800, "label": "nap"}),
    ("ru", "хочу вздремнуть 20 минут", "set_timer", {"seconds": 1200, "label": "сна"}),
    ("ru", "посплю полчаса, разбуди меня", "set_timer", {"seconds": 1800, "label": "сна"}),
    # the light asked for in a word (the model asked which device)
    ("en", "lights, please", "turn_on", {"domain": "light", "area": "Living Room"}),
    ("ru", "свет, пожалуйста", "turn_on", {"area": "Living Room", "domain": "light"}),
    ("ru", "кондиционер на двадцать", "set_temperature", {"temperature": 20}),
    # asked politely with a gerund (the model: a refusal)
    ("en", "do you mind switching off the kitchen light", "turn_off", {"device": "kitchen light"}),
    ("en", "would you mind setting an alarm for 7", "set_alarm", {"time": "07:00"}),
    # to be told when a length has passed (refused as a question)
    ("en", "could you let me know when 10 minutes have passed", "set_timer", {"seconds": 600}),
    ("en", "tell me when 5 minutes are up", "set_timer", {"seconds": 300}),
    ("en", "how much longer on the pasta", "timer_remaining", {"label": "pasta"}),
    # everything off on a floor, with the reason before it (the model: a device called "downstairs")
    ("en", "i'm off to bed, turn everything off downstairs", "turn_off", {"area": "Downstairs"}),
]


def test_a_question_about_a_time_is_still_one() -> None:
    """Told when a length has passed is a request only when the length comes first: "tell me when the 7 am alarm is
    set for" asks (the model's set_alarm would have set one)."""
    from hearthd.agent.checks import asks

    assert asks("tell me when the 7 am alarm is set for", "en") and asks("tell me when my alarm is", "en")
    assert not asks("let me know when ten minutes have passed", "en")


@pytest.mark.parametrize("lang,text,tool,arguments", [
    ("en", "set a timer for an hour and a half", "set_timer", {"seconds": 5400}),
    ("en", "set a timer for me for 90 seconds", "set_timer", {"seconds": 90}),
    ("en", "cancel the 10 minute timer", "cancel_timer", {"label": "10 minute"}),
    ("en", "set a timer for 10 minutes", "set_timer", {"seconds": 600}),
])
def test_a_length_alone_is_no_timers_name(living_room: Components, lang: str, text: str, tool: str,
                                          arguments: dict[str, Any]) -> None:
    """The name-then-length reading never takes part of a length as a name ("an" of "an hour and a half")."""
    decision = decide(living_room, text, lang)
    assert [(c.name, c.arguments) for c in decision.calls] == [(tool, arguments)]


@pytest.mark.parametrize("lang,text,tool,arguments", CASES)
def test_said_at_home_is_read(living_room: Components, lang: str, text: str, tool: str,
                              arguments: dict[str, Any]) -> None:
    decision = decide(living_room, text, lang)
    assert (decision.kind, decision.source) == ("call", "fastpath"), decision
    assert [(c.name, c.arguments) for c in decision.calls] == [(tool, arguments)]


def test_a_named_cover_is_still_asked_about_by_its_name(living_room: Components) -> None:
    """"Are the bedroom blinds open": those blinds, not every cover of the bedroom."""
    decision = decide(living_room, "are the bedroom blinds open", "en")
    assert [(c.name, c.arguments) for c in decision.calls] == [("device_state", {"device": "bedroom blinds"})]


@pytest.mark.parametrize("lang,text,tool,arguments", [
    ("hi", "पाँच मिनट और जोड़ दो", "change_timer", {"seconds": 300, "direction": "add"}),
    ("hi", "10 minute aur badha do", "change_timer", {"seconds": 600, "direction": "add"}),
    ("hi", "टाइमर में पाँच मिनट और जोड़ दो", "change_timer", {"seconds": 300, "direction": "add"}),
    ("en", "how long till the eggs are done", "timer_remaining", {"label": "eggs"}),
])
def test_a_timer_said_by_its_length_or_its_food(living_room: Components, lang: str, text: str, tool: str,
                                                arguments: dict[str, Any]) -> None:
    """Hindi's "और" after a length is "more", not "and" ("पाँच मिनट और जोड़ दो" was cut in two and half refused)."""
    decision = decide(living_room, text, lang)
    assert [(c.name, c.arguments) for c in decision.calls] == [(tool, arguments)], decision


def test_and_after_a_length_still_joins_two_requests() -> None:
    from hearthd.agent.split import split_requests

    assert split_requests("दस मिनट का टाइमर लगाओ और लाइट बंद करो", "hi") == ["दस मिनट का टाइमर लगाओ", "लाइट बंद करो"]
    assert split_requests("पाँच मिनट और जोड़ दो", "hi") == ["पाँच मिनट और जोड़ दो"]


@pytest.mark.parametrize("lang,text,tool,arguments", [
    ("en", "Is it called in the bedroom?", "sensor_value", {"area": "Bedroom", "quantity": "temperature"}),
    ("ru", "А можно свет подусклее.", "set_brightness", {"step": "down", "area": "Living Room"}),
])
def test_as_whisper_wrote_it_in_the_spoken_check(living_room: Components, lang: str, text: str, tool: str,
                                                 arguments: dict[str, Any]) -> None:
    """Slips whisper base made of these sentences said by the test voices ("cold" as "called", "потусклее" as
    "подусклее"), read as meant."""
    decision = decide(living_room, text, lang)
    assert [(c.name, c.arguments) for c in decision.calls] == [(tool, arguments)], decision


@pytest.mark.parametrize("lang,text", [("hi", "बहुत गर्मी है"), ("hi", "मुझे ठंड लग रही है"), ("hi", "bahut garmi hai yaar"),
                                       ("ru", "слушай, а можно потеплее сделать"), ("ru", "а можно похолоднее")])
def test_how_warm_it_feels_asks_to_what_temperature(living_room: Components, lang: str, text: str) -> None:
    """Said as it feels ("बहुत गर्मी है": no tool found; "ठंड लग रही है": the temperature read out; "а можно потеплее":
    the model's brightness): the thermostat, and to what temperature is asked, as "мне жарко" is."""
    decision = decide(living_room, text, lang)
    assert (decision.kind, decision.missing, [c.name for c in decision.calls]) == (
        "clarify", "temperature", ["set_temperature"]), decision


@pytest.mark.parametrize("lang,text,device", [("hi", "बहुत गर्मी है, पंखा चला दो", "fan"),
                                              ("hi", "ठंड लग रही है, हीटर चालू कर दो", "Heater")])
def test_the_feeling_beside_a_request_is_its_reason(living_room: Components, lang: str, text: str, device: str) -> None:
    decision = decide(living_room, text, lang)
    assert [(c.name, c.arguments) for c in decision.calls] == [("turn_on", {"device": device})]


POLITE_AND_EVERYDAY = [
    # Hindi asked politely, as a question or in the future ("will you …?", "can you …?"): a request, not a question
    ("hi", "बेडरूम के पर्दे बंद कर दोगे?", "close_cover", {"device": "bedroom curtains"}),
    ("hi", "ज़रा किचन की लाइट जला दोगे?", "turn_on", {"device": "Kitchen Light"}),
    ("hi", "क्या आप सात बजे का अलार्म लगा सकते हैं?", "set_alarm", {"time": "07:00"}),
    ("hi", "टीवी बंद करोगे?", "turn_off", {"device": "TV"}),
    ("hi", "kya aap light on kar sakte hain", "turn_on", {"area": "Living Room", "domain": "light"}),
    # which alarm on a day, asked in other words
    ("ru", "какой будильник стоит на завтра", "list_alarms", {"day": "tomorrow"}),
    ("ru", "во сколько у меня будильник завтра", "list_alarms", {"day": "tomorrow"}),
    ("hi", "कल का अलार्म कितने बजे का है", "list_alarms", {"day": "tomorrow"}),
    # Russian everyday words
    ("ru", "переключи песню", "media", {"action": "next"}),
    ("ru", "приглуши немного свет на кухне", "set_brightness", {"step": "down", "device": "Kitchen Light"}),
    ("ru", "впусти немного света", "open_cover", {"device": "Living Room Blinds"}),
    ("ru", "что-нибудь внизу ещё включено?", "device_state", {"area": "Downstairs", "state": "on", "question": "any"}),
    # a room too dark, said as a remark; music asked for as a wish; the song turned up; someone addressed first
    ("ru", "что-то в спальне темновато", "turn_on", {"area": "Bedroom", "domain": "light"}),
    ("ru", "на кухне темно", "turn_on", {"area": "Kitchen", "domain": "light"}),
    ("en", "it's pitch black in the bedroom", "turn_on", {"area": "Bedroom", "domain": "light"}),
    ("en", "can I get some music", "media", {"action": "play"}),
    ("en", "I'd like a little music please", "media", {"action": "play"}),
    ("hi", "गाना थोड़ा तेज़ करो", "change_volume", {"direction": "up"}),
    ("hi", "टीवी बहुत तेज़ चल रहा है", "change_volume", {"direction": "down"}),
    ("hi", "music thoda dheema karo", "change_volume", {"direction": "down"}),
    ("hi", "भैया ज़रा रसोई की बत्ती बंद कर दो", "turn_off", {"device": "Kitchen Light"}),
    ("ru", "сколько осталось у таймера", "timer_remaining", {}),
    # wished for, asked with a "क्या" after the request, or said of everything
    ("en", "could the kitchen be a bit brighter", "set_brightness", {"area": "Kitchen", "step": "up"}),
    ("en", "no more music thanks", "media", {"action": "pause"}),
    ("hi", "किचन में थोड़ी और रोशनी कर दो", "set_brightness", {"area": "Kitchen", "step": "up"}),
    ("hi", "हॉल की लाइट बंद कर दोगे क्या", "turn_off", {"device": "Hallway Light"}),
    ("hi", "पंखा चला दो क्या", "turn_on", {"device": "fan"}),
    ("hi", "सब कुछ लॉक कर दो", "lock_door", {"device_class": "door"}),
    # as public sets of spoken commands say them: another assistant's name first, a level "down to", a wish
    ("en", "olly turn off the lights", "turn_off", {"area": "Living Room", "domain": "light"}),
    ("en", "hey google what time is it", "get_time", {}),
    ("en", "turn the lights down to 50%", "set_brightness", {"percent": 50, "area": "Living Room"}),
    ("en", "raise the volume to 70", "set_volume", {"percent": 70}),
    ("en", "I want the lights dimmer", "set_brightness", {"step": "down", "area": "Living Room"}),
    ("en", "increase the brightness of the lights", "set_brightness", {"step": "up", "area": "Living Room"}),
    ("en", "can you make the room darker", "set_brightness", {"step": "down", "area": "Living Room"}),
    ("ru", "олли выключи свет", "turn_off", {"area": "Living Room", "domain": "light"}),
    ("ru", "алиса, сделай громче", "change_volume", {"direction": "up"}),
    ("hi", "ओली लाइट बंद करो", "turn_off", {"area": "Living Room", "domain": "light"}),
    ("ru", "я хочу свет потусклее", "set_brightness", {"step": "down", "area": "Living Room"}),
    ("ru", "увеличь громкость до семидесяти", "set_volume", {"percent": 70}),
    ("ru", "сделай в комнате темнее", "set_brightness", {"step": "down", "area": "Living Room"}),
    ("ru", "останови будильник", "stop", {}),
    ("hi", "अलार्म रोको", "stop", {}),
    ("hi", "लाइट पचास प्रतिशत कर दो", "set_brightness", {"percent": 50, "area": "Living Room"}),
    ("hi", "मुझे लाइट थोड़ी धीमी चाहिए", "set_brightness", {"step": "down", "area": "Living Room"}),
    ("hi", "सात बजे वाला अलार्म आठ बजे कर दो", "move_alarm", {"time": "07:00", "new_time": "08:00"}),
    ("hi", "पंखा मीडियम पर कर दो", "set_fan_speed", {"device": "fan", "percent": 66}),
    ("en", "is the pasta timer nearly done", "timer_remaining", {"label": "pasta"}),
    # the doors, said in the plural: every door's lock (never one guessed)
    ("en", "lock the doors", "lock_door", {"device_class": "door"}),
    ("ru", "запри двери", "lock_door", {"device_class": "door"}),
    ("hi", "दरवाज़े लॉक कर दो", "lock_door", {"device_class": "door"}),
    # Russian slang verbs, a fan's level with no verb, and "и" whisper ran into the name before a level
    ("ru", "вырубай свет, я спать", "turn_off", {"area": "Living Room", "domain": "light"}),
    ("ru", "врубай свет на кухне", "turn_on", {"device": "Kitchen Light"}),
    ("ru", "вентилятор на пятьдесят процентов", "set_fan_speed", {"device": "fan", "percent": 50}),
    ("ru", "Ивентилятор на 50%", "set_fan_speed", {"device": "fan", "percent": 50}),
    ("en", "can you put the thermostat on 19?", "set_temperature", {"temperature": 19.0}),
    ("en", "put the heating on 21 degrees", "set_temperature", {"temperature": 21.0}),
    # whether the computer charges: its battery's state
    ("en", "is the laptop charging", "battery_status", {}),
    ("ru", "ноутбук заряжается?", "battery_status", {}),
    ("hi", "लैपटॉप चार्ज हो रहा है क्या", "battery_status", {}),
    # the volume changed by an amount: a step, never that level (the tolerant tier read "на десять" as the level 10;
    # "volume up by 10" was refused as a request for later)
    ("ru", "прибавь громкость на десять", "change_volume", {"direction": "up"}),
    ("ru", "убавь звук на 20 процентов", "change_volume", {"direction": "down"}),
    ("en", "volume up by 10", "change_volume", {"direction": "up"}),
    ("en", "turn it down by 20 percent", "change_volume", {"direction": "down"}),
    ("hi", "आवाज़ दस बढ़ा दो", "change_volume", {"direction": "up"}),
    ("hi", "वॉल्यूम 20 कम करो", "change_volume", {"direction": "down"}),
    # darkness asked for turns the lights off, never on (the tolerant tier had read "сделай тут темно" and "कमरे में
    # अंधेरा कर दो" as "it's dark here")
    ("en", "make it dark in here", "turn_off", {"area": "Living Room", "domain": "light"}),
    ("ru", "сделай тут темно", "turn_off", {"area": "Living Room", "domain": "light"}),
    ("hi", "कमरे में अंधेरा कर दो", "turn_off", {"area": "Living Room", "domain": "light"}),
]


@pytest.mark.parametrize("lang,text,tool,arguments", POLITE_AND_EVERYDAY)
def test_said_politely_or_in_everyday_words(living_room: Components, lang: str, text: str, tool: str,
                                            arguments: dict[str, Any]) -> None:
    decision = decide(living_room, text, lang)
    assert decision.kind == "call" and [(c.name, c.arguments) for c in decision.calls] == [(tool, arguments)], decision


@pytest.mark.parametrize("lang,text", [("hi", "क्या टीवी चालू है"), ("hi", "लाइट जल रही है क्या?")])
def test_a_hindi_question_is_still_a_question(living_room: Components, lang: str, text: str) -> None:
    decision = decide(living_room, text, lang)
    assert not any(c.name in ("turn_on", "turn_off") for c in decision.calls), decision


def test_shopping_in_the_genitive_is_declined_as_shopping(living_room: Components) -> None:
    assert decide(living_room, "добавь молоко в список покупок", "ru").say == "decline.shopping"


@pytest.mark.parametrize("lang,text", [("en", "movie time"), ("en", "party time"), ("en", "time for bed")])
def test_a_time_of_day_by_name_is_no_timer_to_ask_about(living_room: Components, lang: str, text: str) -> None:
    """The model took "movie time" for a timer and asked "For how long?": nothing of a countdown was said."""
    decision = decide(living_room, text, lang)
    assert not (decision.kind == "clarify" and [c.name for c in decision.calls] == ["set_timer"]), decision
    assert decision.calls == [] or decision.kind != "call", decision


@pytest.mark.parametrize("lang,text", [("en", "I need a countdown"), ("en", "start a countdown please"),
                                       ("ru", "засеки время"), ("hi", "चाय के लिए टाइमर लगा दो")])
def test_a_countdown_said_in_other_words_is_still_asked_how_long(living_room: Components, lang: str,
                                                                 text: str) -> None:
    decision = decide(living_room, text, lang)
    assert (decision.kind, decision.missing, [c.name for c in decision.calls]) == (
        "clarify", "seconds", ["set_timer"]), decision



@pytest.mark.parametrize("lang,text,tool,arguments", [
    ("en", "open the bedroom curtains a bit", "set_cover_position", {"device": "bedroom curtains", "percent": 25}),
    ("en", "crack the blinds open", "set_cover_position", {"device": "blinds", "percent": 25}),
    ("en", "turn on the fan on low", "set_fan_speed", {"device": "fan", "percent": 33}),
    ("en", "make the lights warmer", "set_color", {"area": "Living Room", "color": "warm white"}),
    ("en", "goodnight, turn off all the lights", "turn_off", {"domain": "light"}),  # the greeting is no request
    ("ru", "сделай свет теплее", "set_color", {"area": "Living Room", "color": "warm white"}),
    ("ru", "отопление включено?", "device_state", {"device": "thermostat"}),
    ("ru", "а на сколько градусов сейчас стоит термостат", "device_state", {"device": "thermostat"}),
    ("ru", "дальше", "media", {"action": "next"}),
    ("ru", "спокойной ночи, выключи везде свет", "turn_off", {"domain": "light"}),
    ("hi", "थर्मोस्टेट कितने पर है", "device_state", {"device": "thermostat"}),
    ("hi", "पंखा धीमे पर चला दो", "set_fan_speed", {"device": "fan", "percent": 33}),
    ("hi", "नीचे सब बंद कर दो", "turn_off", {"area": "Downstairs"}),
    ("hi", "थोड़ी देर और सोने दो", "snooze", {}),
    ("hi", "अगला", "media", {"action": "next"}),
    ("hi", "कुछ गाने बजाओ", "media", {"action": "play"}),
])
def test_everyday_words_for_levels_colours_and_media(living_room: Components, lang: str, text: str, tool: str,
                                                     arguments: dict[str, Any]) -> None:
    decision = decide(living_room, text, lang)
    assert decision.kind == "call" and [(c.name, c.arguments) for c in decision.calls] == [(tool, arguments)], decision


@pytest.mark.parametrize("lang,text", [("en", "make it warmer"), ("ru", "сделай теплее"), ("hi", "थोड़ा ठंडा कर दो")])
def test_warmer_without_the_light_is_the_thermostats_question(living_room: Components, lang: str, text: str) -> None:
    decision = decide(living_room, text, lang)
    assert (decision.kind, decision.missing) == ("clarify", "temperature"), decision


@pytest.mark.parametrize("lang,text,arguments", [
    ("ru", "мне надо встать завтра в семь", {"day": "tomorrow", "time": "07:00"}),
    ("ru", "завтра мне нужно проснуться в шесть", {"day": "tomorrow", "time": "06:00"}),
    ("ru", "мне завтра надо встать в полседьмого", {"day": "tomorrow", "time": "06:30"}),
])
def test_the_day_said_beside_having_to_get_up_is_the_alarms_day(living_room: Components, lang: str, text: str,
                                                                   arguments: dict[str, Any]) -> None:
    """"Мне надо встать завтра в семь" set the alarm for seven with no day: at two in the night it rang at seven that
    same morning, a day early (the template had a literal "завтра" where the day's list belongs)."""
    decision = decide(living_room, text, lang)
    assert [(c.name, c.arguments) for c in decision.calls] == [("set_alarm", arguments)], decision


@pytest.mark.parametrize("lang,text", [("ru", "в субботу мне надо встать в девять"),
                                       ("ru", "мне нужно проснуться в субботу в девять")])
def test_a_weekday_said_beside_having_to_get_up_is_that_date_never_a_repeat(living_room: Components, lang: str,
                                                                            text: str) -> None:
    """The model made it an alarm repeating every Saturday."""
    decision = decide(living_room, text, lang)
    assert decision.source == "fastpath" and [c.name for c in decision.calls] == ["set_alarm"], decision
    arguments = decision.calls[0].arguments
    assert arguments["time"] == "09:00" and "repeat" not in arguments
    import datetime

    assert datetime.date.fromisoformat(arguments["date"]).weekday() == 5


@pytest.mark.parametrize("lang,text,tool,arguments", [
    ("hi", "bhai light band kar de", "turn_off", {"domain": "light", "area": "Living Room"}),
    ("hi", "भाई लाइट बंद कर दे", "turn_off", {"domain": "light", "area": "Living Room"}),
    ("hi", "yaar fan chala de", "turn_on", {"device": "fan"}),
    ("hi", "टीवी बंद कर दे", "turn_off", {"device": "TV"}),
])
def test_hindi_said_to_a_friend_is_the_same_request(living_room: Components, lang: str, text: str, tool: str,
                                                     arguments: dict[str, Any]) -> None:
    """"कर दे" (to an equal, to a friend) asks what "कर दो" asks: "bhai light band kar de" reached the model, which
    tried the lights' brightness at more than 100 % and was refused."""
    decision = decide(living_room, text, lang)
    assert decision.kind == "call" and [(c.name, c.arguments) for c in decision.calls] == [(tool, arguments)], decision


@pytest.mark.parametrize("lang,text,arguments", [
    ("ru", "свет в гостиной на 30", {"device": "living room light", "percent": 30}),
    ("ru", "приглуши свет в гостиной до двадцати", {"device": "living room light", "percent": 20}),
    ("ru", "приглуши свет наполовину", {"area": "Living Room", "percent": 50}),
    ("ru", "свет на полную", {"area": "Living Room", "percent": 100}),
    ("ru", "свет на 70", {"area": "Living Room", "percent": 70}),
    ("ru", "в спальне свет на 40", {"device": "Bedroom Light", "percent": 40}),
])
def test_a_rooms_light_to_a_level_in_russian(living_room: Components, lang: str, text: str,
                                             arguments: dict[str, Any]) -> None:
    """"Свет в гостиной на 30" was refused (the model saw an alarm), "приглуши свет наполовину" asked which device."""
    decision = decide(living_room, text, lang)
    assert decision.kind == "call" and [(c.name, c.arguments) for c in decision.calls] == [
        ("set_brightness", arguments)], decision


@pytest.mark.parametrize("lang,text,tool,arguments", [
    ("en", "turn the kitchen light of", "turn_off", {"device": "Kitchen Light"}),
    ("en", "switch the fan of please", "turn_off", {"device": "Ceiling Fan"}),
    ("en", "hey can u turn of the kitchen lite", "turn_off", {"device": "Kitchen Light"}),
    ("en", "turn on the light of the kitchen", "turn_on", {"device": "Kitchen Light"}),  # "of" inside stays "of"
])
def test_of_said_last_is_off(living_room: Components, lang: str, text: str, tool: str,
                             arguments: dict[str, Any]) -> None:
    """"Turn the kitchen light of" went to the model, which switched the light ON; the tolerant tier did the same with
    the fan. No request ends in "of"; "off" ends many (heard.toml, a phrase said last)."""
    decision = decide(living_room, text, lang)
    assert decision.kind == "call" and [(c.name, c.arguments) for c in decision.calls] == [(tool, arguments)], decision


@pytest.mark.parametrize("lang,text,tool,arguments", [
    ("en", "start counting down 11 minutes for the eggs", "set_timer", {"seconds": 660, "label": "eggs"}),
    ("en", "count down five minutes", "set_timer", {"seconds": 300}),
    ("en", "could you do a countdown of 12 minutes", "set_timer", {"seconds": 720}),
    ("en", "give me a countdown of 3 minutes", "set_timer", {"seconds": 180}),
    ("en", "give the eggs another two minutes", "change_timer", {"label": "eggs", "seconds": 120, "direction": "add"}),
    ("en", "how long is left on the pasta", "timer_remaining", {"label": "pasta"}),
    ("en", "how much time is left for my tea", "timer_remaining", {"label": "tea"}),
    ("en", "how long is left on the timer", "timer_remaining", {}),  # the timer is no timer's name
    ("en", "never mind the timer", "cancel_timer", {}),
])
def test_a_countdown_and_a_timer_called_by_what_it_times(living_room: Components, lang: str, text: str, tool: str,
                                                         arguments: dict[str, Any]) -> None:
    """Counting down is a timer ("start counting down eleven minutes for the eggs": the model's timer, without its
    name); the eggs are their timer ("give the eggs another two minutes", "how long is left on the pasta": refused)."""
    decision = decide(living_room, text, lang)
    assert (decision.kind, decision.source) == ("call", "fastpath"), decision
    assert [(c.name, c.arguments) for c in decision.calls] == [(tool, arguments)], decision


@pytest.mark.parametrize("lang,text,answer,door", [
    ("en", "lock the door", "the front one", "Front Door"),
    ("en", "could you lock the door please", "the back one please", "Back Door"),
    ("ru", "запри дверь", "входную", "front door"),
    ("hi", "दरवाज़ा लॉक कर दो", "आगे वाला", "front door"),
    ("hi", "darwaza lock kar do", "पीछे का दरवाज़ा", "back door"),
])
def test_the_door_without_saying_which_is_asked_about_and_the_answer_locks_it(living_room: Components, lang: str,
                                                                               text: str, answer: str,
                                                                               door: str) -> None:
    """A home with two doors: "दरवाज़ा लॉक कर दो" reached the model, which locked the computer's screen; "запри дверь"
    became a question about a device's state. Now "Which door?", and the answer ("the front one": the door whose name
    has the word) completes it."""
    from .spoken_home import Asked

    conversation = Asked()
    router = living_room.router()
    asked = router.decide(text, lang, conversation)
    assert (asked.kind, asked.missing, [c.name for c in asked.calls]) == ("clarify", "door", ["lock_door"]), asked
    done = router.decide(answer, lang, conversation)
    assert [(c.name, str(c.arguments.get("door")).lower()) for c in done.calls] == [("lock_door", door.lower())], done


@pytest.mark.parametrize("lang,text,tool,arguments", [
    ("en", "I need to be up by 7 tomorrow. Can you make sure of that?", "set_alarm",
     {"time": "07:00", "day": "tomorrow"}),
    ("en", "turn off the kitchen light, would you?", "turn_off", {"device": "Kitchen Light"}),
    ("en", "set a timer for 5 minutes, could you do that?", "set_timer", {"seconds": 300}),
    ("ru", "выключи свет на кухне, ладно?", "turn_off", {"device": "Kitchen Light"}),
    ("ru", "поставь будильник на семь, хорошо?", "set_alarm", {"time": "07:00"}),
    ("hi", "लाइट बंद कर दो, ठीक है?", "turn_off", {"area": "Living Room", "domain": "light"}),
])
def test_asked_after_the_request_whether_it_will_be_done_is_no_question(living_room: Components, lang: str, text: str,
                                                                        tool: str, arguments: dict[str, Any]) -> None:
    """"…, can you make sure of that?" asks whether the request will be done: the question mark is its own. The
    request was refused as a question ("the sentence asks, it does not request")."""
    decision = decide(living_room, text, lang)
    assert decision.kind == "call" and [(c.name, c.arguments) for c in decision.calls] == [(tool, arguments)], decision


@pytest.mark.parametrize("lang,text", [("en", "is the kitchen light on, okay?"), ("ru", "свет на кухне горит, ладно?")])
def test_a_question_with_okay_after_it_is_still_a_question(living_room: Components, lang: str, text: str) -> None:
    decision = decide(living_room, text, lang)
    assert [c.name for c in decision.calls] in (["device_state"], []), decision
    assert not any(c.name in ("turn_on", "turn_off") for c in decision.calls)


@pytest.mark.parametrize("lang,text,tool", [
    ("en", "lamp on", "turn_on"),
    ("en", "switch of the lamp", "turn_off"),
    ("ru", "включи-ка лампу", "turn_on"),
    ("ru", "лампу выключи", "turn_off"),
    ("hi", "लैंप जला दो", "turn_on"),
])
def test_the_lamp_is_the_rooms_lamp_not_its_ceiling_light(living_room: Components, lang: str, text: str,
                                                           tool: str) -> None:
    """The living room has a ceiling light (Living Room Light) and a Floor Lamp: "lamp on" switched on the Living Room
    Light (the room and the kind, which the resolver read as the light of that name), "включи лампу" went to the
    model, which asked which device. The kind's word said is in one name (home.toml `name_words`: "лампу" is lamp)."""
    decision = decide(living_room, text, lang)
    assert [(c.name, c.arguments) for c in decision.calls] == [(tool, {"device": "Floor Lamp"})], decision


@pytest.mark.parametrize("lang,text", [("en", "turn everything off"), ("en", "could you switch everything off please"),
                                       ("ru", "выключи всё"), ("ru", "всё выключи"), ("hi", "सब कुछ बंद कर दो"),
                                       ("hi", "sab kuch band kar do")])
def test_everything_off_with_no_room_said_is_this_rooms(living_room: Components, lang: str, text: str) -> None:
    """As "turn off the lights" is this room's lights (the model asked which device; "सब कुछ बंद कर दो" was refused)."""
    decision = decide(living_room, text, lang)
    assert [(c.name, c.arguments) for c in decision.calls] == [("turn_off", {"area": "Living Room"})], decision


@pytest.mark.parametrize("lang,text,tool,arguments", [
    ("en", "too bright in here", "set_brightness", {"step": "down", "area": "Living Room"}),
    ("en", "the lights are too bright", "set_brightness", {"step": "down", "area": "Living Room"}),
    ("en", "way too dark", "set_brightness", {"step": "up", "area": "Living Room"}),
    ("hi", "पंखा फुल कर दो", "set_fan_speed", {"device": "fan", "percent": 100}),
    ("hi", "fan full kar do", "set_fan_speed", {"device": "fan", "percent": 100}),
])
def test_too_bright_and_the_fan_full_said_in_a_few_words(living_room: Components, lang: str, text: str, tool: str,
                                                         arguments: dict[str, Any]) -> None:
    decision = decide(living_room, text, lang)
    assert decision.kind == "call" and [(c.name, c.arguments) for c in decision.calls] == [(tool, arguments)], decision


@pytest.mark.parametrize("lang,text", [("ru", "приоткрой шторы в спальне"), ("ru", "открой жалюзи чуть-чуть"),
                                       ("hi", "पर्दे थोड़े खोल दो"), ("hi", "blinds thoda khol do")])
def test_a_cover_opened_a_little_is_a_quarter_open(living_room: Components, lang: str, text: str) -> None:
    """As "open the blinds a little" is: "приоткрой шторы" asked which device, "पर्दे थोड़े खोल दो" was refused (the
    model's position above 100 %)."""
    decision = decide(living_room, text, lang)
    assert [(c.name, c.arguments.get("percent")) for c in decision.calls] == [("set_cover_position", 25)], decision


@pytest.mark.parametrize("lang,text,tool,arguments", [
    ("ru", "поставь будильник на каждый будний день на семь", "set_alarm", {"repeat": "weekdays", "time": "07:00"}),
    ("ru", "сколько времени осталось до будильника", "list_alarms", {}),
    ("ru", "включи что-нибудь", "media", {"action": "play"}),
    ("hi", "दस मिनट गिन लो", "set_timer", {"seconds": 600}),
    ("hi", "das minute gin lo", "set_timer", {"seconds": 600}),
])
def test_everyday_alarms_timers_and_music(living_room: Components, lang: str, text: str, tool: str,
                                          arguments: dict[str, Any]) -> None:
    """The model set the weekday alarm for one day only, took the time to the alarm for a timer's, refused "включи
    что-нибудь" and "दस मिनट गिन लो"."""
    decision = decide(living_room, text, lang)
    assert decision.kind == "call" and [(c.name, c.arguments) for c in decision.calls] == [(tool, arguments)], decision


@pytest.mark.parametrize("lang,text,tool,arguments", [
    ("en", "increase the volume", "change_volume", {"direction": "up"}),
    ("en", "decrease the volume a bit", "change_volume", {"direction": "down"}),
    ("en", "turn the volume all the way down", "set_volume", {"percent": 0}),
    ("en", "is my alarm set", "list_alarms", {}),
    ("en", "did i set an alarm for tomorrow", "list_alarms", {"day": "tomorrow"}),
    ("en", "i want the lights to be purple", "set_color", {"color": "purple", "area": "Living Room"}),
    ("en", "heat the house to 21", "set_temperature", {"temperature": 21.0}),
])
def test_said_the_way_a_public_set_of_commands_says_it(living_room: Components, lang: str, text: str, tool: str,
                                                       arguments: dict[str, Any]) -> None:
    """"Increase the volume" was refused (the model's set_volume with no level), "is my alarm set" refused as a
    question about setting one, "i want the lights to be purple" refused (the model's brightness above 100 %), "heat
    the house to 21" sent to a device called "house"."""
    decision = decide(living_room, text, lang)
    assert decision.kind == "call" and [(c.name, c.arguments) for c in decision.calls] == [(tool, arguments)], decision


@pytest.mark.parametrize("lang,text,tool,arguments", [
    ("en", "give the pasta timer 3 more minutes", "change_timer", {"label": "pasta", "seconds": 180,
                                                                   "direction": "add"}),
    ("en", "pasta timer plus 2 minutes", "change_timer", {"label": "pasta", "seconds": 120, "direction": "add"}),
    ("en", "the eggs timer minus a minute", "change_timer", {"label": "eggs", "seconds": 60, "direction": "subtract"}),
    ("en", "add a couple of minutes to the timer", "change_timer", {"seconds": 120, "direction": "add"}),
    ("en", "give the timer a couple more minutes", "change_timer", {"seconds": 120, "direction": "add"}),
    ("en", "set a timer for a couple of minutes", "set_timer", {"seconds": 120}),
    ("ru", "добавь 3 минуты к таймеру пасты", "change_timer", {"label": "пасты", "seconds": 180, "direction": "add"}),
    ("ru", "сними минуту с таймера пасты", "change_timer", {"label": "пасты", "seconds": 60,
                                                            "direction": "subtract"}),
    ("ru", "накинь ещё пару минут на таймер", "change_timer", {"seconds": 120, "direction": "add"}),
    ("ru", "поставь таймер на пару минут", "set_timer", {"seconds": 120}),
])
def test_a_timer_called_by_what_it_times_and_a_couple_of_minutes(living_room: Components, lang: str, text: str,
                                                                  tool: str, arguments: dict[str, Any]) -> None:
    """"Give the pasta timer 3 more minutes" was asked how long (the model: nothing said), "pasta timer plus 2
    minutes" refused as part of it left out, "к таймеру пасты" added to whichever timer ran; "a couple of minutes" and
    "пару минут" were asked how long, "give the timer a couple more minutes" as a new timer."""
    decision = decide(living_room, text, lang)
    assert decision.kind == "call" and [(c.name, c.arguments) for c in decision.calls] == [(tool, arguments)], decision


@pytest.mark.parametrize("lang,text", [
    ("en", "make it warmer in the bedroom"), ("en", "could you make the bedroom a bit warmer please"),
    ("en", "warm up the bedroom"), ("ru", "сделай в спальне теплее"), ("ru", "прогрей спальню"),
    ("hi", "बेडरूम को थोड़ा गरम कर दो"), ("hi", "bedroom ko garam kar do"),
])
def test_a_room_made_warmer_is_its_heater_not_its_lights_white(living_room: Components, lang: str,
                                                               text: str) -> None:
    """"Make the bedroom warmer" made the bedroom light's white warm (the tolerant tier, from "make the lights
    warmer"); "сделай в спальне теплее" asked the temperature for a thermostat the bedroom does not have. As "it's cold
    in the bedroom": its heater on; a thermostat there asks how warm."""
    decision = decide(living_room, text, lang)
    assert decision.kind == "call" and [(c.name, c.arguments) for c in decision.calls] == [
        ("turn_on", {"device": "bedroom Heater"})], decision


@pytest.mark.parametrize("lang,text", [("en", "make the living room cooler"), ("ru", "сделай в гостиной попрохладнее")])
def test_a_room_with_a_thermostat_made_cooler_is_asked_how_cool(living_room: Components, lang: str, text: str) -> None:
    decision = decide(living_room, text, lang)
    assert decision.kind == "clarify" and decision.missing == "temperature", decision
    assert [(c.name, c.arguments) for c in decision.calls] == [
        ("set_temperature", {"device": "living room Thermostat"})]


@pytest.mark.parametrize("lang,text", [
    ("en", "is everything locked"), ("en", "are the doors locked"), ("en", "is the house locked up for the night"),
    ("en", "did I lock up"), ("en", "could you check that the doors are locked"), ("ru", "всё ли заперто"),
    ("ru", "двери заперты?"), ("ru", "я всё запер?"), ("hi", "सब लॉक है क्या"), ("hi", "kya sab lock hai"),
])
def test_whether_everything_is_locked_asks_after_every_lock(living_room: Components, lang: str, text: str) -> None:
    """"Is everything locked" asked the model, which wanted a device called "lock_door"; "are the doors locked" one
    called "door"; "всё ли заперто" was refused. Said as "are all the doors locked" is: every lock's state."""
    decision = decide(living_room, text, lang)
    assert decision.kind == "call" and [(c.name, c.arguments) for c in decision.calls] == [
        ("device_state", {"domain": "lock", "state": "locked", "question": "all"})], decision


@pytest.mark.parametrize("lang,text,days", [
    ("en", "what day is it tomorrow", 1), ("en", "what's the date tomorrow", 1), ("en", "what's tomorrow's date", 1),
    ("en", "what day of the week will it be the day after tomorrow", 2), ("ru", "какой завтра день", 1),
    ("ru", "какое завтра число", 1), ("ru", "какое число будет послезавтра", 2), ("hi", "कल कौन सा दिन है", 1),
    ("hi", "कल क्या तारीख है", 1), ("hi", "parson kaun sa din hai", 2),
])
def test_a_day_said_by_its_word_is_asked_after_by_its_date(living_room: Components, lang: str, text: str,
                                                           days: int) -> None:
    """"What day is it tomorrow", "какой завтра день", "कल कौन सा दिन है" answered today's time or date (the word
    for the day was read as nothing): now that day's date and weekday."""
    from datetime import date, timedelta

    decision = decide(living_room, text, lang)
    assert decision.kind == "call" and [(c.name, c.arguments) for c in decision.calls] == [
        ("get_time", {"date": (date.today() + timedelta(days=days)).isoformat()})], decision


@pytest.mark.parametrize("lang,text", [
    ("en", "how loud is it"), ("en", "what volume is it at"), ("en", "is the sound muted"),
    ("ru", "громкость сейчас какая"), ("ru", "звук выключен?"), ("hi", "volume kitna hai"),
    ("hi", "क्या आवाज़ म्यूट है"),
])
def test_how_loud_it_is_asked_is_a_question_of_the_volume(living_room: Components, lang: str, text: str) -> None:
    """Refused as a question about changing the volume ("the sentence asks, it does not request"), or asked which
    level to set (the model's set_volume with none)."""
    decision = decide(living_room, text, lang)
    assert decision.kind == "call" and [(c.name, c.arguments) for c in decision.calls] == [("volume_level", {})], \
        decision


@pytest.mark.parametrize("text,colour", [
    ("сделай свет на кухне зелёного цвета", "green"),  # the colour in the genitive, with its word
    ("переключи свет на кухне на синий цвет", "blue"),
    ("свет на кухне в синий цвет", "blue"),
    ("хочу синий свет на кухне", "blue"),
    ("Сделай свет на кухне зеленом.", "green"),  # "зелёным" as whisper writes it at times
    ("сделай свет на кухне красным", "red"),
])
def test_a_russian_colour_said_in_any_of_its_forms(living_room: Components, text: str, colour: str) -> None:
    """Russian says a light's colour in several cases and frames ("зелёного цвета", "на синий", "в синий цвет"); the
    templates knew three endings, and each of these went to the model."""
    decision = decide(living_room, text, "ru")
    assert (decision.kind, decision.source) == ("call", "fastpath"), decision
    assert [(c.name, c.arguments["color"], c.arguments["device"].casefold()) for c in decision.calls] \
        == [("set_color", colour, "kitchen light")]
