"""hearthd's own Russian and Hindi templates beyond the command suites: groups of lights and doors, questions about a
group, verbless and infinitive commands, politeness and fillers, the clock. Each sentence is read in the suites' home
(tests/data/commands/home.yaml) by the daemon's router with the model standing in, and must be read by the templates
alone, as the one expected call (judged by the devices it acts on, as the suites are). None of these sentences is a
suite case: they are other ways of saying the same patterns. The negatives must never become an action."""

from __future__ import annotations

from typing import Any

import pytest

from hearthd.evaluation.evaluate import Command, NoModel, SuiteHome, load_suite

from .test_suites import LANGS, SUITES, home  # noqa: F401  (the suites' home, built once per module)

LIGHTS = {"domain": "light"}


def _decide(home: SuiteHome, text: str, lang: str) -> tuple[Any, bool]:  # noqa: F811
    """The router's first decision, and whether it was made without asking the model."""
    model = NoModel()
    decision = home.router(lambda: model).decide(text, lang)
    return decision, not model.asked


READ: list[tuple[str, str, str, dict[str, Any]]] = [
    # ru: the whole home's lights, only with «весь/все» or «везде/во всём доме»; any verb form and word order
    ("ru", "выключите весь свет", "turn_off", LIGHTS),
    ("ru", "погасите все лампы во всей квартире", "turn_off", LIGHTS),
    ("ru", "свет по всему дому выключить", "turn_off", LIGHTS),
    ("ru", "зажги везде свет", "turn_on", LIGHTS),
    ("ru", "включить свет во всех комнатах", "turn_on", LIGHTS),
    ("ru", "везде свет погасить", "turn_off", LIGHTS),
    # ru: a room's or a floor's lights
    ("ru", "погаси свет в спальне", "turn_off", {"area": "Bedroom", "domain": "light"}),
    ("ru", "выключить освещение в кабинете", "turn_off", {"area": "Office", "domain": "light"}),
    ("ru", "в ванной свет выключить", "turn_off", {"area": "Bathroom", "domain": "light"}),
    ("ru", "свет в гараже включите", "turn_on", {"area": "Garage", "domain": "light"}),
    ("ru", "включи все лампы наверху", "turn_on", {"area": "Upstairs", "domain": "light"}),
    ("ru", "внизу весь свет погасить", "turn_off", {"area": "Downstairs", "domain": "light"}),
    ("ru", "зажгите лампы в гостиной", "turn_on", {"area": "Living Room", "domain": "light"}),
    ("ru", "выключи всё в спальне", "turn_off", {"area": "Bedroom"}),
    ("ru", "выключите в гараже всё", "turn_off", {"area": "Garage"}),
    # ru: every door locked; a door or a device with the verb last or in the infinitive
    ("ru", "заприте все двери", "lock_door", {"device_class": "door"}),
    ("ru", "все двери на замок", "lock_door", {"device_class": "door"}),
    ("ru", "закрыть все двери на ключ", "lock_door", {"device_class": "door"}),
    ("ru", "запереть заднюю дверь", "lock_door", {"door": "Back Door"}),
    ("ru", "входную дверь запри", "lock_door", {"door": "Front Door"}),
    ("ru", "выключить кофемашину", "turn_off", {"device": "Coffee Machine"}),
    ("ru", "обогреватель включить", "turn_on", {"device": "Heater"}),
    ("ru", "настольную лампу на тридцать процентов", "set_brightness", {"device": "Desk Lamp", "percent": 30}),
    ("ru", "настольная лампа на 40 процентов яркости", "set_brightness", {"device": "Desk Lamp", "percent": 40}),
    ("ru", "сделай яркость настольной лампы сорок", "set_brightness", {"device": "Desk Lamp", "percent": 40}),
    ("ru", "громкость сорок", "set_volume", {"percent": 40}),
    ("ru", "звук на семьдесят", "set_volume", {"percent": 70}),
    # ru: questions about a group (read only)
    ("ru", "сколько у нас ламп включено", "device_state", {"domain": "light", "state": "on", "question": "how_many"}),
    ("ru", "сколько лампочек горит наверху", "device_state",
     {"area": "Upstairs", "domain": "light", "state": "on", "question": "how_many"}),
    ("ru", "в каких комнатах горит свет", "device_state", {"domain": "light", "state": "on", "question": "which"}),
    ("ru", "какие лампы горят", "device_state", {"domain": "light", "state": "on", "question": "which"}),
    ("ru", "горит ли где-нибудь свет внизу", "device_state",
     {"area": "Downstairs", "domain": "light", "state": "on", "question": "any"}),
    ("ru", "горят ли лампы в гостиной", "device_state",
     {"area": "Living Room", "domain": "light", "state": "on", "question": "any"}),
    ("ru", "свет в кабинете включён?", "device_state",
     {"area": "Office", "domain": "light", "state": "on", "question": "any"}),
    ("ru", "выключен ли весь свет", "device_state", {"domain": "light", "state": "off", "question": "all"}),
    ("ru", "осталось ли что-нибудь включённым на кухне", "device_state",
     {"area": "Kitchen", "state": "on", "question": "any"}),
    ("ru", "все ли двери заперты", "device_state", {"domain": "lock", "state": "locked", "question": "all"}),
    ("ru", "есть ли незапертые двери", "device_state", {"domain": "lock", "state": "unlocked", "question": "any"}),
    ("ru", "мы не забыли запереть заднюю дверь?", "device_state", {"device": "Back Door", "state": "locked"}),
    ("ru", "я не забыл выключить телевизор?", "device_state", {"device": "TV", "state": "off"}),
    # ru: politeness and fillers around a request
    ("ru", "если не сложно, выключи телевизор", "turn_off", {"device": "TV"}),
    ("ru", "будь любезен, запри заднюю дверь", "lock_door", {"door": "Back Door"}),
    ("ru", "спасибо, а теперь включи кофемашину", "turn_on", {"device": "Coffee Machine"}),
    ("ru", "так, э-э, выключи свет в гараже", "turn_off", {"area": "Garage", "domain": "light"}),
    ("ru", "типа сколько ламп горит наверху", "device_state",
     {"area": "Upstairs", "domain": "light", "state": "on", "question": "how_many"}),
    ("ru", "поставьте на кондиционере охлаждение", "set_climate_mode", {"mode": "cool"}),
    # ru: the clock
    ("ru", "сегодня суббота?", "get_time", {"what": "weekday"}),
    ("ru", "а сегодня разве воскресенье", "get_time", {"what": "weekday"}),
    ("ru", "какое сегодня число, подскажи", "get_time", {"what": "date"}),
    # hi: the whole home's lights, Devanagari and Hinglish, with सारी/सभी/सब or पूरे घर की
    ("hi", "सभी बत्तियाँ बुझा दीजिए", "turn_off", LIGHTS),
    ("hi", "पूरे घर की लाइटें चालू कर दो", "turn_on", LIGHTS),
    ("hi", "sab lights on kar do", "turn_on", LIGHTS),
    ("hi", "poore ghar ki batti band kar dena", "turn_off", LIGHTS),
    # hi: a room's or a floor's lights, everything in a room
    ("hi", "बेडरूम की सारी बत्तियाँ जला दो", "turn_on", {"area": "Bedroom", "domain": "light"}),
    ("hi", "ऑफिस की लाइट बंद कर दीजिए", "turn_off", {"area": "Office", "domain": "light"}),
    ("hi", "ऊपर की बत्तियाँ बुझाओ", "turn_off", {"area": "Upstairs", "domain": "light"}),
    ("hi", "नीचे की सारी लाइट्स ऑफ़ कर दो", "turn_off", {"area": "Downstairs", "domain": "light"}),
    ("hi", "garage ki light on karo", "turn_on", {"area": "Garage", "domain": "light"}),
    ("hi", "neeche ki saari lights jala do", "turn_on", {"area": "Downstairs", "domain": "light"}),
    ("hi", "लिविंग रूम की सारी बत्तियाँ बुझा दो", "turn_off", {"area": "Living Room", "domain": "light"}),
    ("hi", "बेडरूम में सब कुछ बंद कर दो", "turn_off", {"area": "Bedroom"}),
    ("hi", "kitchen mein sab kuch band kar do", "turn_off", {"area": "Kitchen"}),
    # hi: every door locked; polite and verbless forms
    ("hi", "सभी दरवाज़े लॉक कर दीजिए", "lock_door", {"device_class": "door"}),
    ("hi", "sab darwaze lock kar dena", "lock_door", {"device_class": "door"}),
    ("hi", "हीटर चालू कर देना", "turn_on", {"device": "Heater"}),
    ("hi", "desk lamp jala dena", "turn_on", {"device": "Desk Lamp"}),
    ("hi", "टीवी ऑन", "turn_on", {"device": "TV"}),
    ("hi", "coffee machine off", "turn_off", {"device": "Coffee Machine"}),
    ("hi", "गैराज लाइट ऑन", "turn_on", {"area": "Garage", "domain": "light"}),
    ("hi", "bathroom light off", "turn_off", {"area": "Bathroom", "domain": "light"}),
    ("hi", "upar ki saari lights off", "turn_off", {"area": "Upstairs", "domain": "light"}),
    ("hi", "आवाज़ चालीस", "set_volume", {"percent": 40}),
    ("hi", "volume saath percent", "set_volume", {"percent": 60}),
    ("hi", "बेडरूम लाइट चालीस परसेंट", "set_brightness", {"device": "Bedroom Light", "percent": 40}),
    ("hi", "desk lamp 30 percent", "set_brightness", {"device": "Desk Lamp", "percent": 30}),
    ("hi", "बीस मिनट का टाइमर", "set_timer", {"seconds": 1200}),
    ("hi", "timer paanch minute ka", "set_timer", {"seconds": 300}),
    # hi: questions about a group (read only)
    ("hi", "अभी कितनी बत्तियाँ जल रही हैं", "device_state", {"domain": "light", "state": "on", "question": "how_many"}),
    ("hi", "ऊपर कितनी लाइटें चालू हैं", "device_state",
     {"area": "Upstairs", "domain": "light", "state": "on", "question": "how_many"}),
    ("hi", "kitni batti on hai", "device_state", {"domain": "light", "state": "on", "question": "how_many"}),
    ("hi", "कहाँ कहाँ लाइट जल रही है", "device_state", {"domain": "light", "state": "on", "question": "which"}),
    ("hi", "kaun si lights on hain", "device_state", {"domain": "light", "state": "on", "question": "which"}),
    ("hi", "क्या नीचे कोई लाइट जल रही है", "device_state",
     {"area": "Downstairs", "domain": "light", "state": "on", "question": "any"}),
    ("hi", "kya garage mein koi light on hai", "device_state",
     {"area": "Garage", "domain": "light", "state": "on", "question": "any"}),
    ("hi", "saari lights off hain kya", "device_state", {"domain": "light", "state": "off", "question": "all"}),
    ("hi", "क्या रसोई में कुछ चालू है", "device_state", {"area": "Kitchen", "state": "on", "question": "any"}),
    ("hi", "office mein kuch on hai kya", "device_state", {"area": "Office", "state": "on", "question": "any"}),
    ("hi", "कोई दरवाज़ा खुला रह गया है क्या", "device_state",
     {"domain": "lock", "state": "unlocked", "question": "any"}),
    ("hi", "kya sabhi darwaze lock hain", "device_state", {"domain": "lock", "state": "locked", "question": "all"}),
    ("hi", "कितने दरवाज़े खुले हैं", "device_state", {"domain": "lock", "state": "unlocked", "question": "how_many"}),
    ("hi", "पीछे का दरवाज़ा लॉक है", "device_state", {"device": "Back Door", "state": "locked"}),
    ("hi", "AC ko heat mode pe dalo", "set_climate_mode", {"mode": "heat"}),
    ("hi", "एसी को ऑटो मोड में डालो", "set_climate_mode", {"mode": "auto"}),
    # hi: the clock, fillers
    ("hi", "abhi time kya ho gaya", "get_time", {"what": "time"}),
    ("hi", "क्या आज शुक्रवार है", "get_time", {"what": "weekday"}),
    ("hi", "aaj sunday hai kya", "get_time", {"what": "weekday"}),
    ("hi", "मतलब, बाथरूम की लाइट बंद कर दो", "turn_off", {"area": "Bathroom", "domain": "light"}),
    ("hi", "bas ek kaam karo, tv band kar do", "turn_off", {"device": "TV"}),
    # colloquial ways to cancel an alarm or a timer, in each language
    ("en", "kill the alarm for half past six", "cancel_alarm", {"time": "06:30"}),
    ("en", "scrap my 7 am alarm", "cancel_alarm", {"time": "07:00"}),
    ("en", "please forget about the 8 o'clock alarm", "cancel_alarm", {"time": "08:00"}),
    ("en", "ditch the tea timer", "cancel_timer", {"label": "tea"}),
    ("en", "nix the timer", "cancel_timer", {}),
    ("en", "zap all my alarms", "cancel_all_alarms", {}),
    ("ru", "сбрось будильник на семь утра", "cancel_alarm", {"time": "07:00"}),
    ("ru", "будильник на шесть тридцать мне больше не нужен", "cancel_alarm", {"time": "06:30"}),
    ("ru", "забудь про будильник на восемь", "cancel_alarm", {"time": "08:00"}),
    ("ru", "вырубай все будильники", "cancel_all_alarms", {}),
    ("ru", "таймер больше не нужен", "cancel_timer", {}),
    ("hi", "सात बजे वाला अलार्म निकाल दो", "cancel_alarm", {"time": "07:00"}),
    ("hi", "छह बजे का अलार्म कैंसिल कर दो", "cancel_alarm", {"time": "06:00"}),
    ("hi", "सारे अलार्म निकाल दो", "cancel_all_alarms", {}),
    # en: colloquial volume and quiet
    ("en", "bit louder", "change_volume", {"direction": "up"}),
    ("en", "could you crank it up", "change_volume", {"direction": "up"}),
    ("en", "i can't hear a thing", "change_volume", {"direction": "up"}),
    ("en", "that's too quiet", "change_volume", {"direction": "up"}),
    ("en", "the music is way too loud", "change_volume", {"direction": "down"}),
    ("en", "turn it down, the kids are sleeping", "change_volume", {"direction": "down"}),
    ("en", "a touch softer", "change_volume", {"direction": "down"}),
    ("en", "okay shut up", "stop", {}),
    ("en", "that's enough", "stop", {}),
    ("en", "shut that thing up", "stop", {}),
    # ru, hi: colloquial volume and quiet
    ("ru", "а то совсем тихо", "change_volume", {"direction": "up"}),
    ("ru", "добавь громкости", "change_volume", {"direction": "up"}),
    ("ru", "музыка чересчур громко", "change_volume", {"direction": "down"}),
    ("ru", "звук убавь пожалуйста", "change_volume", {"direction": "down"}),
    ("ru", "заткнись", "stop", {}),
    ("ru", "уйми этот трезвон", "stop", {}),
    ("hi", "ठीक से सुनाई नहीं दे रहा", "change_volume", {"direction": "up"}),
    ("hi", "awaaz bahut tez hai", "change_volume", {"direction": "down"}),
    # "too much" says it is too loud; "make it more" asks for louder (checks.toml volume_up)
    ("hi", "आवाज़ बहुत ज़्यादा है", "change_volume", {"direction": "down"}),
    ("hi", "आवाज़ थोड़ी ज़्यादा कर दो", "change_volume", {"direction": "up"}),
    ("en", "put the kitchen lights on fifty percent", "set_brightness", {"device": "Kitchen Light", "percent": 50}),
    ("en", "knock the heating up a couple degrees", "set_temperature", {"step": "up", "by": 2}),
    ("hi", "चुप रहो", "stop", {}),
    ("hi", "bahut ho gaya", "stop", {}),
    # en: a device of this home by its name, said loosely (hearthd's {home_name}); a device left on is turned off
    ("en", "somebody left the bathroom light on again", "turn_off", {"device": "Bathroom Light"}),
    ("en", "the ceiling fan, switch it off please", "turn_off", {"device": "Ceiling Fan"}),
    ("en", "could we have some light in the office", "turn_on", {"area": "Office", "domain": "light"}),
    ("en", "make the floor lamp a little brighter", "set_brightness", {"device": "Floor Lamp", "step": "up"}),
    ("en", "dim the desk lamp a touch", "set_brightness", {"device": "Desk Lamp", "step": "down"}),
    ("en", "could the desk lamp be a nice blue", "set_color", {"device": "Desk Lamp", "color": "blue"}),
    ("en", "fan to forty percent", "set_fan_speed", {"device": "Ceiling Fan", "percent": 40}),
    ("en", "did anyone leave the back door unlocked", "device_state", {"device": "Back Door", "state": "unlocked"}),
    ("en", "are any lights still on downstairs", "device_state",
     {"area": "Downstairs", "domain": "light", "state": "on", "question": "any"}),
    # en: covers and locks as a group, media and the timer said casually
    ("en", "shades up please", "open_cover", {"device": "Living Room Blinds"}),
    ("en", "let the sunshine in", "open_cover", {"device": "Living Room Blinds"}),
    ("en", "lock up before bed", "lock_door", {"device_class": "door"}),
    ("en", "mute the tv for a sec", "mute", {}),
    ("en", "throw on a bit of music", "media", {"action": "play"}),
    ("en", "clear out my alarms", "cancel_all_alarms", {}),
    ("en", "tack an extra two minutes onto the timer", "change_timer", {"seconds": 120, "direction": "add"}),
    ("en", "get me ten minutes on the clock", "set_timer", {"seconds": 600}),
    ("en", "time three minutes for me please", "set_timer", {"seconds": 180}),
    ("en", "set a time for 25 minutes", "set_timer", {"seconds": 1500}),
    ("en", "when does my alarm go off", "list_alarms", {}),
    ("en", "make sure I'm up at half six", "set_alarm", {"time": "06:30"}),
    ("en", "the egg timer, just kill it", "cancel_timer", {"label": "egg"}),
    # en: "kill"/"cut" the lights (never the colour "cool" misheard), a room too dark or too bright, a device said
    # first ("the telly's still on, …"), a device by the one word of its name that is its own ("the coffee"),
    # the garage as its door, a fan's speeds, a floor's temperature, a reminder with no "what" as a timer
    ("en", "cut the lights would you", "turn_off", {"area": "Living Room", "domain": "light"}),
    ("en", "kill all the lights in the bedroom", "turn_off", {"area": "Bedroom", "domain": "light"}),
    ("en", "douse the lights downstairs", "turn_off", {"area": "Downstairs", "domain": "light"}),
    ("en", "it's much too dark in the hallway", "set_brightness", {"area": "Hallway", "step": "up"}),
    ("en", "it's a little too bright in the bedroom", "set_brightness", {"area": "Bedroom", "step": "down"}),
    ("en", "could we have the floor lamp a touch dimmer", "set_brightness", {"device": "Floor Lamp", "step": "down"}),
    ("en", "the telly's still on, could you shut it off", "turn_off", {"device": "TV"}),
    ("en", "somebody left the desk lamp on, turn it off please", "turn_off", {"device": "Desk Lamp"}),
    ("en", "the heater is off, switch it back on", "turn_on", {"device": "Heater"}),
    ("en", "switch the coffee on", "turn_on", {"device": "Coffee Machine"}),
    ("en", "fire up the coffee please", "turn_on", {"device": "Coffee Machine"}),
    ("en", "breakfast is done, switch the machine off", "turn_off", {"device": "Coffee Machine"}),
    ("en", "could you close up the garage", "close_cover", {"device": "Garage Door"}),
    ("en", "did somebody leave the garage open again", "device_state", {"device": "Garage Door", "state": "open"}),
    ("en", "run the ceiling fan on low", "set_fan_speed", {"device": "Ceiling Fan", "percent": 33}),
    ("en", "crank the fan up to max", "set_fan_speed", {"device": "Ceiling Fan", "percent": 100}),
    ("en", "how cold is it downstairs right now", "sensor_value", {"area": "Downstairs", "quantity": "temperature"}),
    ("en", "ping me in a quarter of an hour", "set_timer", {"seconds": 900}),
    ("en", "forget the alarm, just scrap it", "cancel_alarm", {}),
    ("en", "want an alarm for half five tomorrow", "set_alarm", {"time": "05:30", "day": "tomorrow"}),
    ("en", "I forgot what day it is", "get_time", {"what": "weekday"}),
    ("en", "put the bedroom light on full brightness", "set_brightness", {"device": "Bedroom Light", "percent": 100}),
    # ru: colloquial verbs (врубай, вырубай, снеси, притормози), «лайт», a time «к семи», minutes into the hour
    ("ru", "врубай свет в гостиной", "turn_on", {"area": "Living Room", "domain": "light"}),
    ("ru", "вырубай телик", "turn_off", {"device": "TV"}),
    ("ru", "выключи лайт на кухне", "turn_off", {"area": "Kitchen", "domain": "light"}),
    ("ru", "снесите все будильники", "cancel_all_alarms", {}),
    ("ru", "притормози таймер пожалуйста", "pause_timer", {"action": "pause"}),
    ("ru", "хватит орать", "stop", {}),
    ("ru", "отопление на двадцать два", "set_temperature", {"temperature": 22}),
    ("ru", "который час, не знаешь", "get_time", {}),
    ("ru", "разбуди меня к семи", "set_alarm", {"time": "07:00"}),
    ("ru", "поставь будильник на десять минут восьмого", "set_alarm", {"time": "07:10"}),
    ("ru", "кондиционер в режим обогрева", "set_climate_mode", {"mode": "heat"}),
    ("ru", "вруби какую-нибудь музыку", "media", {"action": "play"}),
    ("ru", "сделай громкость потише", "change_volume", {"direction": "down"}),
    ("ru", "ну скоро по таймеру", "timer_remaining", {}),
    ("ru", "а сколько там уже натикало", "get_time", {}),
    # ru: brighter/darker with no word for the light (the room's lights), darkness said vividly, the garage as its
    # door, a fan's speeds, a temperature with no "thermostat", a floor's temperature, «подъём», a device asked
    # about and then switched off by a pronoun
    ("ru", "в спальне сделай посветлее", "set_brightness", {"area": "Bedroom", "step": "up"}),
    ("ru", "потемнее в гостиной пожалуйста", "set_brightness", {"area": "Living Room", "step": "down"}),
    ("ru", "на кухне темно как ночью", "turn_on", {"area": "Kitchen", "domain": "light"}),
    ("ru", "в ванной ни зги не видно", "turn_on", {"area": "Bathroom", "domain": "light"}),
    ("ru", "гараж закройте пожалуйста", "close_cover", {"device": "Garage Door"}),
    ("ru", "а мы гараж не закрыли", "device_state", {"device": "Garage Door", "state": "open"}),
    ("ru", "разгони вентилятор на максимум", "set_fan_speed", {"device": "Ceiling Fan", "percent": 100}),
    ("ru", "вентилятор на среднюю скорость", "set_fan_speed", {"device": "Ceiling Fan", "percent": 66}),
    ("ru", "сделайте двадцать один градус", "set_temperature", {"temperature": 21}),
    ("ru", "сколько сейчас градусов внизу", "sensor_value", {"area": "Downstairs", "quantity": "temperature"}),
    ("ru", "завтра подъём в восемь", "set_alarm", {"time": "08:00", "day": "tomorrow"}),
    ("ru", "обогреватель до сих пор включён, выруби его", "turn_off", {"device": "Heater"}),
    ("ru", "торшер выключи", "turn_off", {"device": "Floor Lamp"}),
    ("ru", "можно свет на кухне включить", "turn_on", {"area": "Kitchen", "domain": "light"}),
    ("ru", "а в спальне свет так и горит", "device_state", {"device": "Bedroom Light", "state": "on"}),
    ("ru", "заднюю дверь заперли?", "device_state", {"device": "Back Door", "state": "locked"}),
    ("ru", "вентилятор на пол мощности", "set_fan_speed", {"device": "Ceiling Fan", "percent": 50}),
    ("ru", "ну проснулась я, хватит звенеть", "stop", {}),
    ("ru", "отложите будильник на десять минут", "snooze", {"minutes": 10}),
    ("ru", "сделай свет в спальне красненьким", "set_color", {"device": "Bedroom Light", "color": "red"}),
    # hi: the same patterns in Hindi and Hinglish
    ("hi", "रसोई की बत्ती जलती रह गई है, बुझा दो", "turn_off", {"area": "Kitchen", "domain": "light"}),
    ("hi", "नीचे वाली सारी लाइटें बंद कर दो", "turn_off", {"area": "Downstairs", "domain": "light"}),
    ("hi", "पीछे के दरवाज़े पे ताला लगा दो", "lock_door", {"door": "Back Door"}),
    ("hi", "कोई म्यूज़िक लगा दो", "media", {"action": "play"}),
    ("hi", "उठ गया हूँ, अब घंटी बंद करो", "stop", {}),
    ("hi", "आठ बजे वाला अलार्म अब नहीं चाहिए", "cancel_alarm", {"time": "08:00"}),
    ("hi", "चाय वाले टाइमर में कितना समय बचा है", "timer_remaining", {"label": "चाय"}),
    ("hi", "अलाम लगा दो छह बजे का", "set_alarm", {"time": "06:00"}),
    ("hi", "desk lamp ki roshni thodi badha do", "set_brightness", {"device": "Desk Lamp", "step": "up"}),
    ("hi", "इस कमरे की रोशनी थोड़ी बढ़ा दो", "set_brightness", {"area": "Living Room", "step": "up"}),
    ("hi", "roshni thoda ghata do", "set_brightness", {"area": "Living Room", "step": "down"}),
    ("hi", "ज़रा गैराज खोल दो", "open_cover", {"device": "Garage Door"}),
    ("hi", "kya garage abhi bhi khula hai", "device_state", {"device": "Garage Door", "state": "open"}),
    ("hi", "पंखे को सबसे तेज़ रफ़्तार पर चला दो", "set_fan_speed", {"device": "Ceiling Fan", "percent": 100}),
    ("hi", "नीचे का तापमान क्या है", "sensor_value", {"area": "Downstairs", "quantity": "temperature"}),
    ("hi", "हीटर अब भी चालू है, बंद कर दो", "turn_off", {"device": "Heater"}),
    ("hi", "music band kar do", "media", {"action": "pause"}),
    ("hi", "मुझे नींद आ रही है, लाइटें ऑफ कर दो", "turn_off", {"area": "Living Room", "domain": "light"}),
    ("hi", "रहने दो, टाइमर कैंसल कर दो", "cancel_timer", {}),
    # hi: this home's devices by their (English) names, darkness in a room, a reason whose "नहीं" describes
    ("hi", "ceiling fan on kar do na", "turn_on", {"device": "Ceiling Fan"}),
    ("hi", "Bedroom Light को ऑफ कर दो", "turn_off", {"device": "Bedroom Light"}),
    ("hi", "desk lamp ko neela karo", "set_color", {"device": "Desk Lamp", "color": "blue"}),
    ("hi", "बाथरूम में बड़ा अंधेरा है", "turn_on", {"area": "Bathroom", "domain": "light"}),
    ("hi", "पंखा बंद कर दो, अब ठंड नहीं लग रही", "turn_off", {"device": "Ceiling Fan"}),
    ("hi", "अब टीवी चालू कर दो", "turn_on", {"device": "TV"}),
    ("hi", "टीवी चल रहा है ना", "device_state", {"device": "TV", "state": "on"}),
    ("hi", "timer mein kitne second bache hain", "timer_remaining", {}),
    ("hi", "टाइमर पूरा होने में कितनी देर है", "timer_remaining", {}),
    # a fan one speed up or down from where it is, in each language's ways
    ("en", "could you turn the ceiling fan down a notch", "set_fan_speed", {"device": "Ceiling Fan", "step": "down"}),
    ("en", "make the fan go a little faster", "set_fan_speed", {"device": "Ceiling Fan", "step": "up"}),
    ("ru", "сделай вентилятор чуть послабее", "set_fan_speed", {"device": "Ceiling Fan", "step": "down"}),
    ("ru", "прибавь скорость вентилятора", "set_fan_speed", {"device": "Ceiling Fan", "step": "up"}),
    ("hi", "पंखे की रफ़्तार थोड़ी बढ़ा दो", "set_fan_speed", {"device": "Ceiling Fan", "step": "up"}),
    ("hi", "pankha thoda slow kar do", "set_fan_speed", {"device": "Ceiling Fan", "step": "down"}),
    ("hi", "पंखा सबसे धीमा पर चला दो", "set_fan_speed", {"device": "Ceiling Fan", "percent": 33}),
    # a courtesy said after the request
    ("en", "switch the hallway light off when you have a minute", "turn_off", {"device": "Hallway Light"}),
    ("en", "lock the back door if that's ok", "lock_door", {"door": "Back Door"}),
    ("ru", "закрой шторы в спальне, если тебе не трудно", "close_cover", {"device": "Bedroom Curtains"}),
    ("ru", "погаси свет в коридоре, спасибо", "turn_off", {"device": "Hallway Light"}),
    # "put … on/off"; a colour said first or a room made a colour
    ("en", "put the bedroom lights off please", "turn_off", {"area": "Bedroom", "domain": "light"}),
    ("en", "could you put the telly off", "turn_off", {"device": "TV"}),
    ("en", "some red light in the office please", "set_color", {"device": "Desk Lamp", "color": "red"}),
    ("en", "make the bedroom a nice warm white", "set_color", {"device": "Bedroom Light", "color": "warm white"}),
    ("en", "pause that", "media", {"action": "pause"}),
    # coffee, brightness in words, volume with the degree after
    ("ru", "свари нам кофейку", "turn_on", {"device": "Coffee Machine"}),
    ("ru", "настольную лампу наполовину", "set_brightness", {"device": "Desk Lamp", "percent": 50}),
    ("ru", "торшер на полную яркость", "set_brightness", {"device": "Floor Lamp", "percent": 100}),
    ("ru", "в кабинете убавь яркость", "set_brightness", {"area": "Office", "step": "down"}),
    ("ru", "погромче немножко", "change_volume", {"direction": "up"}),
    # the volume asked for as a question: "можно …?", "can it be …?"
    ("ru", "а можно погромче?", "change_volume", {"direction": "up"}),
    ("ru", "можно музыку чуть-чуть потише, пожалуйста", "change_volume", {"direction": "down"}),
    ("en", "can it be a bit louder", "change_volume", {"direction": "up"}),
    ("en", "could we have the music a little quieter please", "change_volume", {"direction": "down"}),
    # asked with a question mark (whisper writes one), and "be a" run together as whisper hears it
    ("en", "Could it be a little louder?", "change_volume", {"direction": "up"}),
    ("en", "Can the music beat a bit quieter?", "change_volume", {"direction": "down"}),
    # whisper writes Russian's comparative prefix apart ("по громче", "по-тише"): read as meant (heard.toml)
    ("ru", "а можно по громче?", "change_volume", {"direction": "up"}),
    ("ru", "сделай музыку по-тише", "change_volume", {"direction": "down"}),
    ("ru", "сделай вентилятор по быстрее", "set_fan_speed", {"device": "Ceiling Fan", "step": "up"}),
    # and swallows the comparative's unstressed ending ("Можно посветли.")
    ("ru", "Можно посветли.", "set_brightness", {"area": "Living Room", "step": "up"}),
    ("ru", "сделай потемни", "set_brightness", {"area": "Living Room", "step": "down"}),
    ("hi", "एक कॉफ़ी बना दीजिए", "turn_on", {"device": "Coffee Machine"}),
    ("hi", "बेडरूम में रोशनी बहुत ज़्यादा है", "set_brightness", {"area": "Bedroom", "step": "down"}),
    ("hi", "कल शाम सात बजे का अलार्म", "set_alarm", {"time": "19:00", "day": "tomorrow"}),
    ("hi", "mera alarm cancel kar do", "cancel_alarm", {}),
    # en: a light by the home's name for it to a level, in words or numbers (hearthd's own list of lights named the
    # desk lamp and not the floor lamp, and the library has no "half")
    ("en", "floor lamp to half", "set_brightness", {"device": "Floor Lamp", "percent": 50}),
    ("en", "bring the floor lamp down to thirty", "set_brightness", {"device": "Floor Lamp", "percent": 30}),
    ("en", "could you take the garage light to max", "set_brightness", {"device": "Garage Light", "percent": 100}),
    ("en", "the bathroom light at half brightness please", "set_brightness",
     {"device": "Bathroom Light", "percent": 50}),
    ("en", "dim the floor lamp to 20%", "set_brightness", {"device": "Floor Lamp", "percent": 20}),
    # en: a timer's name said after its length, a timer asked about by what it times, curtains pulled, a fan got
    # going, a floor's devices asked about, light let in
    ("en", "timer, three minutes, for the eggs", "set_timer", {"seconds": 180, "label": "eggs"}),
    ("en", "a ten minute countdown for my tea", "set_timer", {"seconds": 600, "label": "tea"}),
    ("en", "how much longer on the eggs", "timer_remaining", {"label": "eggs"}),
    ("en", "how long till the pasta's done", "timer_remaining", {"label": "pasta"}),
    ("en", "how much more time on my timer", "timer_remaining", {}),  # "timer" names no timer
    ("en", "pull the bedroom curtains closed", "close_cover", {"device": "Bedroom Curtains"}),
    ("en", "draw the living room blinds open", "open_cover", {"device": "Living Room Blinds"}),
    ("en", "get the fan going", "turn_on", {"device": "Ceiling Fan"}),
    ("en", "could you get the telly going", "turn_on", {"device": "TV"}),
    ("en", "is anything still on downstairs", "device_state", {"area": "Downstairs", "state": "on", "question": "any"}),
    ("en", "let some light in, open the blinds", "open_cover", {"device": "Living Room Blinds"}),
    # the room itself made lighter or darker, asked for more light, a room dimmed as a whole; when the next alarm is
    ("en", "could you make it a little lighter in here", "set_brightness", {"area": "Living Room", "step": "up"}),
    ("en", "can I get some more light please", "set_brightness", {"area": "Living Room", "step": "up"}),
    ("en", "make the bedroom a touch darker", "set_brightness", {"area": "Bedroom", "step": "down"}),
    ("en", "please brighten the office up a bit", "set_brightness", {"area": "Office", "step": "up"}),
    ("ru", "а можно чуть потемнее", "set_brightness", {"area": "Living Room", "step": "down"}),
    ("ru", "на кухне слишком темно", "set_brightness", {"area": "Kitchen", "step": "up"}),
    ("hi", "थोड़ी और रोशनी चाहिए", "set_brightness", {"area": "Living Room", "step": "up"}),
    ("en", "how much time before my next alarm rings", "list_alarms", {}),
    ("en", "what time does my alarm go off tomorrow", "list_alarms", {"day": "tomorrow"}),
    ("ru", "когда прозвенит ближайший будильник", "list_alarms", {}),
    ("hi", "मेरा अगला अलार्म कब बजेगा", "list_alarms", {}),
    # a nudge in a while about something: a timer named for it
    ("en", "give me a nudge in ten minutes about the tea", "set_timer", {"seconds": 600, "label": "the tea"}),
    ("en", "ping me in 20 minutes to take the bread out", "set_timer",
     {"seconds": 1200, "label": "take the bread out"}),
    # one day's alarms, in the whole home's catalogue
    ("en", "I won't need an alarm tomorrow", "cancel_alarm", {"day": "tomorrow"}),
    ("ru", "сбрось все будильники на сегодня", "cancel_all_alarms", {"day": "today"}),
    ("hi", "aaj ka alarm hata do", "cancel_alarm", {"day": "today"}),
    # "is the door shut?" asked with its question word: every door's lock
    ("hi", "क्या दरवाज़ा बंद है", "device_state", {"domain": "lock", "state": "locked", "question": "all"}),
    ("hi", "दरवाजे बंद हैं क्या", "device_state", {"domain": "lock", "state": "locked", "question": "all"}),
    # ended with the danda, as whisper writes Hindi (the templates read none of these: the tolerant tier or the model)
    ("hi", "पांच मिनट का टाइमर लगा दो।", "set_timer", {"seconds": 300}),
    ("hi", "पीछे का दरवाज़ा खोल दो।", "unlock_door", {"door": "Back Door"}),
    ("hi", "शाम पांच बजे मम्मी को फोन करना याद दिलाना।", "set_alarm", {"time": "17:00", "label": "मम्मी को फोन करना"}),
    ("ru", "дверь в гараж закрой", "close_cover", {"device": "Garage Door"}),
    ("hi", "लाइट की ब्राइटनेस बढ़ा दो", "set_brightness", {"area": "Living Room", "step": "up"}),
    ("hi", "लाइट पूरी तेज़ कर दो", "set_brightness", {"area": "Living Room", "percent": 100}),
    ("hi", "म्यूट हटाओ", "unmute", {}),  # "remove the mute": the mute word said is no opposite
    ("en", "lights to max", "set_brightness", {"area": "Living Room", "percent": 100}),
    ("ru", "яркость на максимум", "set_brightness", {"area": "Living Room", "percent": 100}),
    # reminders (alarms named for what they remind of) and named timers, said as people say them
    ("en", "remind me tomorrow at 9 to call the dentist", "set_alarm",
     {"day": "tomorrow", "time": "09:00", "label": "call the dentist"}),
    ("en", "cancel the reminder to call the dentist", "cancel_alarm", {"label": "call the dentist"}),
    ("en", "what reminders do I have", "list_alarms", {}),
    ("en", "how long left on the pizza", "timer_remaining", {"label": "pizza"}),
    ("ru", "какие у меня напоминания", "list_alarms", {}),
    ("ru", "отмени таймер пиццы", "cancel_timer", {"label": "пиццы"}),
    ("ru", "сколько осталось на таймере пиццы", "timer_remaining", {"label": "пиццы"}),
    ("ru", "Сколько осталось?", "timer_remaining", {}),
    ("hi", "पिज़्ज़ा टाइमर कैंसल करो", "cancel_timer", {"label": "पिज़्ज़ा"}),
    # a room's cold asked about, not said: how warm it is there (the heater is switched on when it is said)
    ("ru", "в спальне холодно?", "sensor_value", {"area": "Bedroom", "quantity": "temperature"}),
    ("en", "is it too hot in the kitchen?", "sensor_value", {"area": "Kitchen", "quantity": "temperature"}),
    # a cover lowered a bit (a quarter of the way down), or opened all the way
    ("en", "lower the blinds a bit", "set_cover_position", {"device": "Living Room Blinds", "percent": 75}),
    ("ru", "опусти жалюзи чуть-чуть", "set_cover_position", {"device": "Living Room Blinds", "percent": 75}),
    ("hi", "पर्दे थोड़े नीचे करो", "set_cover_position", {"device": "Bedroom Curtains", "percent": 75}),
    ("en", "open the curtains all the way", "open_cover", {"device": "Bedroom Curtains"}),
    # said shorter or looser than the templates had it
    ("en", "set an alarm 6am", "set_alarm", {"time": "06:00"}),
    ("en", "give me a wake-up call at six tomorrow", "set_alarm", {"time": "06:00", "day": "tomorrow"}),
    ("en", "snooze for 10", "snooze", {"minutes": 10}),
    ("en", "the kitchen's too dark", "set_brightness", {"area": "Kitchen", "step": "up"}),
    ("en", "let's have the kitchen lights at half", "set_brightness", {"device": "Kitchen Light", "percent": 50}),
    # how the thermostat is, asked of the heating ("отопление включено?" was read, the English the model's)
    ("en", "is the heating on", "device_state", {"device": "Thermostat"}),
    ("en", "what is the heating set to", "device_state", {"device": "Thermostat"}),
    # a part of an hour said after "for" is the length, no timer's name ("quarter" was the name, the hour the length)
    ("en", "set a timer for quarter of an hour", "set_timer", {"seconds": 900}),
    ("en", "start a timer for a quarter of an hour", "set_timer", {"seconds": 900}),
    ("hi", "पौन घंटे का टाइमर लगाओ", "set_timer", {"seconds": 2700}),  # three quarters of an hour
    # asked as a worry, the negation the question's courtesy ("didn't I leave the garage open?"): only read
    ("ru", "я не оставил гараж открытым?", "device_state", {"device": "Garage Door", "state": "open"}),
    ("ru", "а я не забыл закрыть гараж", "device_state", {"device": "Garage Door", "state": "closed"}),
    ("ru", "я не оставил кофемашину включенной?", "device_state", {"device": "Coffee Machine", "state": "on"}),
    ("hi", "मैंने गैराज खुला तो नहीं छोड़ा?", "device_state", {"device": "Garage Door", "state": "open"}),
]


@pytest.mark.parametrize(("lang", "text", "tool", "arguments"), READ, ids=[r[1] for r in READ])
def test_the_templates_read_it_as_said(home: SuiteHome, lang: str, text: str, tool: str,  # noqa: F811
                                       arguments: dict[str, Any]) -> None:
    decision, fast = _decide(home, text, lang)
    assert fast, f"{text!r} was left to the model"
    assert decision.kind == "call" and decision.source == "fastpath", decision
    assert Command(text, lang, tool, arguments).judge_decision(decision, home), \
        [(c.name, c.arguments) for c in decision.calls]


@pytest.mark.parametrize(("lang", "text", "time", "ahead"), [
    ("en", "wake me at half six the day after tomorrow", "06:30", 2),
    ("ru", "будильник на восемь послезавтра", "08:00", 2),
    ("ru", "разбуди меня послезавтра в семь", "07:00", 2),
    ("hi", "परसों शाम पाँच बजे का अलार्म लगा दो", "17:00", 2),
    ("hi", "mujhe parson 6 baje utha dena", "06:00", 2),
])
def test_a_day_said_beside_the_time_is_the_alarms_date(home: SuiteHome, lang: str, text: str, time: str,  # noqa: F811
                                                       ahead: int) -> None:
    """The day after tomorrow by its word, before or after the time: a date, never dropped (the alarm would ring
    tomorrow morning) and never a daily repeat."""
    from datetime import date, timedelta

    decision, fast = _decide(home, text, lang)
    assert fast and decision.kind == "call", decision
    day = (date.today() + timedelta(days=ahead)).isoformat()
    assert [(c.name, c.arguments) for c in decision.calls] == [("set_alarm", {"time": time, "date": day})]


# The tool is certain and one detail is not said: asked without the model, keeping what was said (the day).
ASKED: list[tuple[str, str, str, str, dict[str, Any]]] = [
    ("en", "I need waking up early", "set_alarm", "time", {}),
    ("en", "make sure I'm awake tomorrow", "set_alarm", "time", {"day": "tomorrow"}),
    ("en", "I've got to be up early tomorrow", "set_alarm", "time", {"day": "tomorrow"}),
    ("en", "could you start a countdown for me", "set_timer", "seconds", {}),
    ("en", "put me a timer on please", "set_timer", "seconds", {}),
    ("ru", "разбуди меня завтра пораньше", "set_alarm", "time", {"day": "tomorrow"}),
    ("ru", "мне завтра надо встать рано", "set_alarm", "time", {"day": "tomorrow"}),
    ("ru", "засеки-ка мне время", "set_timer", "seconds", {}),
    ("hi", "कल सुबह जल्दी उठा देना", "set_alarm", "time", {"day": "tomorrow"}),
    ("hi", "mujhe kal jaga dena", "set_alarm", "time", {"day": "tomorrow"}),
    ("en", "could you make it a bit warmer in here", "set_temperature", "temperature", {}),
    ("ru", "сделайте попрохладнее в квартире", "set_temperature", "temperature", {}),
    # the heating turned up or down by an amount not said: to what, asked (never the generic "which device?"); by so
    # many degrees it is a step from the thermostat's target (tests/test_said_as_felt.py)
    ("en", "could you nudge the heating up a few degrees", "set_temperature", "temperature", {}),
    ("en", "turn the thermostat down a notch", "set_temperature", "temperature", {}),
    ("ru", "подкрути отопление чуть-чуть", "set_temperature", "temperature", {}),
    ("ru", "сделай на несколько градусов прохладнее", "set_temperature", "temperature", {}),
    ("hi", "AC का टेम्परेचर कम करो", "set_temperature", "temperature", {}),
]


@pytest.mark.parametrize(("lang", "text", "tool", "missing", "held"), ASKED, ids=[r[1] for r in ASKED])
def test_the_missing_detail_is_asked(home: SuiteHome, lang: str, text: str, tool: str, missing: str,  # noqa: F811
                                     held: dict[str, Any]) -> None:
    decision, fast = _decide(home, text, lang)
    assert fast, f"{text!r} was left to the model"
    assert (decision.kind, decision.missing) == ("clarify", missing), decision
    assert [(c.name, c.arguments) for c in decision.calls] == [(tool, held)]


# Never an action: a negation, a question, an unlock or opening of every door, a request for what the home lacks.
NEVER_ACTS: list[tuple[str, str]] = [
    ("ru", "не выключай свет"),
    ("ru", "не выключай весь свет"),
    ("ru", "не надо выключать свет на кухне"),
    ("ru", "если не трудно, не выключай свет"),
    ("ru", "не гаси свет наверху"),
    ("ru", "не запирай все двери"),
    ("ru", "выключить свет?"),
    ("ru", "весь свет выключить?"),
    ("ru", "зачем ты выключил свет на кухне"),
    ("ru", "не забудь выключить свет"),
    ("ru", "открой все двери"),
    ("ru", "отопри все двери"),
    ("ru", "громкость на 10 больше"),
    ("ru", "выключи свет на луне"),
    ("ru", "включи свет в машине"),
    ("ru", "не включай на термостате обогрев"),
    ("hi", "बत्ती बंद मत करो"),
    ("hi", "लाइट मत बुझाओ"),
    ("hi", "saari lights band mat karo"),
    ("hi", "heater band na karo"),
    ("hi", "ऊपर की लाइटें बंद मत करना"),
    ("hi", "टीवी चालू?"),
    ("hi", "सारे दरवाज़े खोल दो"),
    ("hi", "saare darwaze unlock karo"),
    ("hi", "आवाज़ दस और"),
    ("hi", "कार की लाइट बंद कर दो"),
    # the colloquial cancels, negated or as a reminder: never a cancellation
    ("en", "don't forget my 7 am alarm"),
    ("en", "do not kill the pizza timer"),
    ("en", "please don't scrap my alarms"),
    ("ru", "не забудь про будильник на семь"),
    ("ru", "не забудь про таймер"),
    ("ru", "не сбрасывай будильник на восемь"),
    ("hi", "सात बजे वाला अलार्म मत निकालो"),
    ("hi", "छह बजे का अलार्म कैंसिल मत करो"),
    # a device by name, but not something to do: a question, a negation, a device of another kind
    ("en", "did somebody leave the garage door open"),
    ("en", "don't make the floor lamp brighter"),
    ("en", "make the front door brighter"),
    ("en", "never mind the timer, just leave it"),
    ("hi", "floor lamp on mat karo"),
    ("hi", "रसोई में अंधेरा नहीं है"),
    ("hi", "पंखा चला दो, पर लाइट मत जलाना"),
    # "kill" is a verb, not a colour heard nearly; the garage asked about or told not to
    ("en", "don't kill the lights yet"),
    ("en", "is the garage shut"),
    ("en", "don't open the garage"),
    ("en", "the coffee's ready"),
    ("ru", "не закрывай гараж"),
    ("ru", "сделай потеплее"),  # the thermostat, asked how warm; never the lights dimmed («потемнее» heard)
    ("hi", "गैराज मत खोलो"),
    ("hi", "car ki light off kar do"),  # "car" is no "kar": a light the home does not have
    ("ru", "таймер нужен"),  # wanted, not cancelled («не нужен» cancels)
]


@pytest.mark.parametrize(("lang", "text"), NEVER_ACTS, ids=[t for _, t in NEVER_ACTS])
def test_never_an_action(home: SuiteHome, lang: str, text: str) -> None:  # noqa: F811
    decision, _ = _decide(home, text, lang)
    # a reading held as a question ("Did you mean …?", Decision.confirm) runs nothing until a yes: not an action
    acting = [c.name for c in decision.calls if not home.registry.reads_only(c.name)] \
        if decision.kind == "call" and not decision.confirm else []
    assert not acting, (text, [(c.name, c.arguments) for c in decision.calls])


# A question about a group is only read, never acted on (and is read as the question it is).
QUESTIONS = [(lang, text) for lang, text, tool, _ in READ if tool == "device_state"]


@pytest.mark.parametrize(("lang", "text"), QUESTIONS, ids=[t for _, t in QUESTIONS])
def test_a_question_is_only_read(home: SuiteHome, lang: str, text: str) -> None:  # noqa: F811
    decision, _ = _decide(home, text, lang)
    assert decision.kind == "call" and all(home.registry.reads_only(c.name) for c in decision.calls), decision


def test_none_of_these_is_a_suite_case() -> None:
    """The suites measure; these sentences are other ways of saying the same patterns."""
    said = {c.text.casefold() for lang in LANGS for c in load_suite(SUITES / f"{lang}.yaml", lang)}
    mine = [t for _, t, _, _ in READ] + [t for _, t in NEVER_ACTS] + [t for _, t, *_ in ASKED]
    assert not [t for t in mine if t.casefold() in said]


@pytest.mark.parametrize(("lang", "text"), [("en", "open the window"), ("ru", "открой окно"),
                                            ("en", "close the living room window")])
def test_a_window_asked_for_is_never_the_blinds(home: SuiteHome, lang: str, text: str) -> None:  # noqa: F811
    """The living room has blinds and no window: "open the window" said there was read as opening the blinds (a
    cover of a kind none is of was taken for the covers that are no doors, as "the blinds" is where none says its
    class); the window is asked for, and the tool finds none."""
    decision, _ = _decide(home, text, lang)
    assert not [c for c in decision.calls if c.arguments.get("device")], [(c.name, c.arguments) for c in decision.calls]
