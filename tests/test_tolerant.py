"""The tolerant tier (issue 25): what the strict templates miss — particles, word order, inflection, a dropped word,
a word speech to text misheard — read as the nearest template sentence, with slots only from words said; a weak
reading asks before it acts, a reading torn between tools leaves the choice to the model within that domain, and
what names nothing hearthd knows is never acted on. No model loads: a stand-in records what reaches it."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any

import pytest

from hearthd.agent.agent import Decision
from hearthd.agent.tolerant import TolerantMatcher, tokens_of
from hearthd.config import Config
from hearthd.daemon.components import Components
from hearthd.daemon.pipeline import Pipeline
from hearthd.events import Trace
from hearthd.locale import phrase

from .mqtt_sim import CommandRecorder as Sent
from .test_library import FLOORS, HOME


class Model:
    """The model's part: declines, and records each request and the tools it was told to choose among."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, list[str] | None]] = []

    def decide(self, text: str, lang: str, now: object = None, only: str | None = None,
               among: list[str] | None = None) -> Decision:
        self.asked.append((text, among))
        return Decision("abstain", reason="no tool fits", source="model")


@pytest.fixture
def home(base_config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Components, Sent, Model]:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    cfg = copy.deepcopy(base_config)
    cfg.dbus.enabled = False
    cfg.mqtt.floors = FLOORS
    cfg.general.area = "Kitchen"
    cfg.agent.tolerant = True  # (the default; said here so a changed default does not change what this file tests)
    c = Components(cfg)
    for e in HOME:
        c.catalogue.entities[e.key] = e
    sent, model = Sent(), Model()
    monkeypatch.setattr(c, "mqtt_link", lambda: sent)
    monkeypatch.setattr(c, "agent", lambda: model)
    return c, sent, model


def turn(c: Components, text: str, lang: str, trace: Trace | None = None) -> Any:
    return asyncio.run(Pipeline(c, trace or Trace()).run_text(text, language=lang))


# Said the way people say it, and each missed by the strict templates: a particle, another word order, an inflected
# or misheard word, a word left out.
HEARD = [
    ("ru", "свет на кухне погаси-ка", {("kl/set", "OFF"), ("ks/set", "OFF")}),
    ("ru", "врубите-ка лампу в спальне", {("bl/set", "ON")}),  # ("включи-ка", "врубай-ка лампу …" the templates read)
    ("ru", "закрой-ка жалюзи в спальне", {("bb/set", "CLOSE")}),
    ("ru", "лампочку в спальне зажги", {("bl/set", "ON")}),
    ("ru", "кофеварочку включи", {("cm/set", "ON")}),  # a diminutive of a name the home has ("кофемашина")
    ("en", "bedroom lamp, on with it", {("bl/set", "ON")}),  # the templates read "…, switch it on" since {home_name}
    ("en", "bedroom blinds shut them", {("bb/set", "CLOSE")}),
    ("hi", "पंखा जालू करो", {("cf/set", "ON")}),  # "चालू" heard with its first sound voiced
    ("ru", "Спальный свет включи.", {("bl/set", "ON")}),  # as whisper writes it, with its full stop
    ("ru", "Ивентилятор включи.", {("cf/set", "ON")}),  # "и вентилятор": a little word glued to the name
    # "-ка" run by whisper into the next word ("зажги-ка лампу в спальне", "включи-ка кофемашину")
    ("ru", "Зажги, калампу в спальне.", {("bl/set", "ON")}),
    ("ru", "Погаси, касвет на кухне.", {("kl/set", "OFF"), ("ks/set", "OFF")}),
    ("ru", "Закрой, кажалюзи в спальне.", {("bb/set", "CLOSE")}),
    # a courtesy's "не" is no denial: "could you" said the Russian way, then the request said loosely
    ("ru", "не мог бы ты включить-ка лампу в спальне", {("bl/set", "ON")}),
    ("ru", "не могли бы вы жалюзи в спальне закрыть-ка", {("bb/set", "CLOSE")}),
    # a little word of a name said as another (की for के): the blinds, not "bedroom ki batti", the light it also
    # sounds like
    ("hi", "bedroom ki blinds band kar do", {("bb/set", "CLOSE")}),
    ("hi", "बेडरूम की ब्लाइंड्स बंद कर दो", {("bb/set", "CLOSE")}),
    # the request beside a remark (its reason), read alone: with the remark's words it fell below the tier's bar
    ("en", "I'm off to work, lock everything", {("fd/set", "LOCK"), ("bd/set", "LOCK")}),
    ("ru", "мне пора спать, лампочку в спальне погаси", {("bl/set", "OFF")}),
]


@pytest.mark.parametrize("lang,text,commands", HEARD)
def test_a_request_the_templates_miss_is_read_by_the_tolerant_tier(
        home: tuple[Components, Sent, Model], lang: str, text: str, commands: set[tuple[str, str]]) -> None:
    c, sent, model = home
    assert c.router().fast_path.match(text, lang) is None  # the strict templates do not read it
    trace = Trace()
    result = turn(c, text, lang, trace)
    assert set(sent.sent) == commands, result.reply
    assert model.asked == []
    assert result.decision.source == "tolerant"


@pytest.mark.parametrize("lang,text,what", [
    ("ru", "какой сегодня число", "date"),  # "какое" heard in another gender: not "какой сегодня месяц и число"
    ("ru", "какая сегодня день недели", "weekday"),
    ("en", "what date today", "date"),
    ("hi", "आज तारीक क्या है", "date"),  # "तारीख" heard without its aspiration
])
def test_a_question_said_loosely_gets_what_its_template_asks_though_no_word_says_it(
        home: tuple[Components, Sent, Model], lang: str, text: str, what: str) -> None:
    c, _, model = home
    assert c.router().fast_path.match(text, lang) is None
    decision = c.router().decide(text, lang)
    assert decision.source == "tolerant"
    assert [(x.name, x.arguments) for x in decision.calls] == [("get_time", {"what": what})]
    assert model.asked == []


@pytest.mark.parametrize("lang,text,seconds", [
    ("ru", "поставь ты мир на пять минут", 300),  # "таймер" heard as two words
    ("hi", "दस मिनेत का तामर लगा दो", 600),  # "मिनट" and "टाइमर" heard approximately
])
def test_timers_said_loosely_or_misheard(home: tuple[Components, Sent, Model], lang: str, text: str,
                                         seconds: int | None) -> None:
    c, _, model = home
    decision = c.router().decide(text, lang)
    assert decision.source == "tolerant" and decision.kind == "call"
    if seconds is None:
        assert [x.name for x in decision.calls] == ["timer_remaining"]
    else:
        assert [(x.name, x.arguments) for x in decision.calls] == [("set_timer", {"seconds": seconds})]
    assert model.asked == []


@pytest.mark.parametrize("lang,text,calls", [
    ("en", "volume down to 20", [("set_volume", {"percent": 20})]),
    ("en", "make it ten minutes more on the timer", [("change_timer", {"seconds": 600, "direction": "add"})]),
])
def test_the_words_that_say_an_amount_follows_are_no_part_of_a_time(
        home: tuple[Components, Sent, Model], lang: str, text: str, calls: list[tuple[str, dict[str, Any]]]) -> None:
    """"up", "down", "more" say how much comes after them ("volume up by 10"); read as words of a time, a duration's
    wildcard swallowed them and "ten minutes more on the timer" read as a new timer as well as an added one (too
    close to choose: the model's), "volume down to 20" as nothing the templates say."""
    c, _, model = home
    decision = c.router().decide(text, lang)
    assert decision.source == "tolerant" and decision.kind == "call"
    assert [(x.name, x.arguments) for x in decision.calls] == calls
    assert model.asked == []


@pytest.mark.parametrize("lang,text", [("en", "Colve the lights in the kitchen."), ("en", "colve the kitchen lights")])
def test_a_word_sharing_only_its_first_letters_with_a_value_is_not_that_value(
        home: tuple[Components, Sent, Model], lang: str, text: str) -> None:
    """"Kill the lights in the garage" heard "Colve …": "colve" is no inflection of "cold" (a colour) for sharing its
    first three letters (Latin words inflect by adding to the word), and the lights were made cool white."""
    c, sent, _ = home
    result = turn(c, text, lang)
    assert not (result.decision is not None and result.decision.kind == "call"
                and any(x.name == "set_color" for x in result.decision.calls)), result.reply
    assert not [s for s in sent.sent if "color" in str(s) or "temp" in str(s)], sent.sent


@pytest.mark.parametrize("lang,text", [
    ("en", "tell me a joke"), ("en", "do you like pizza"), ("ru", "купи хлеба"), ("ru", "напиши Саше, что я опаздываю"),
    ("ru", "накрой на стол"), ("hi", "रास्ते में ट्रैफिक कैसा है"), ("hi", "सूरज कितने बजे उगेगा"),
    ("ru", "сколько стоит биткоин"),  # two words of "на сколько стоит будильник", and no alarm said
    ("en", "how much does a pizza cost"),
])
def test_what_names_nothing_hearthd_knows_is_never_acted_on(home: tuple[Components, Sent, Model], lang: str,
                                                            text: str) -> None:
    c, sent, _ = home
    result = turn(c, text, lang)
    assert sent.sent == []
    assert result.decision.kind != "call" and result.decision.source != "tolerant"


def test_a_weak_reading_is_a_question_and_acts_only_on_yes(home: tuple[Components, Sent, Model]) -> None:
    c, sent, _ = home
    matcher = c.router().tolerant
    assert matcher is not None
    matcher.act = 0.99  # every reading below it is weak: asked, not done
    asked = turn(c, "не мог бы ты включить-ка лампу в спальне", "ru")
    assert sent.sent == [] and asked.decision.confirm
    assert "Bedroom Lamp" in asked.reply and "?" in asked.reply
    assert turn(c, "нет", "ru").reply and sent.sent == []  # "no": nothing done
    turn(c, "не мог бы ты включить-ка лампу в спальне", "ru")
    turn(c, "да", "ru")
    assert sent.sent == [("bl/set", "ON")]


@pytest.mark.parametrize("lang,text", [
    ("ru", "громкость на 10 больше"),  # "больше": no volume of 10
    ("en", "open the bedroom blinds about a third"),  # "a third": part way, not open
    ("ru", "включи свет в машине"),  # a place the home does not have: no template knows "машине"
])
def test_a_reading_that_leaves_words_unread_goes_to_the_model_with_its_domain(
        home: tuple[Components, Sent, Model], lang: str, text: str) -> None:
    """The model reads the whole within the domain; when it finds nothing there (this stand-in never does), the tier's
    own reading is asked as a question, never done, and never the generic refusal."""
    c, sent, model = home
    decision = c.router().decide(text, lang)
    (_, among), = model.asked
    assert among and sent.sent == []
    assert decision.source == "model" or (decision.source == "tolerant" and decision.confirm
                                          and decision.kind == "call" and decision.calls[0].name in among)


def test_a_reading_beside_unknown_words_the_model_declines_is_asked_and_done_only_on_yes(
        home: tuple[Components, Sent, Model]) -> None:
    c, sent, model = home
    text = "лампу в спальне включи, будь ласочка"  # "ласочка": no template knows it
    asked = turn(c, text, "ru")
    assert model.asked and model.asked[0][1]  # the model was asked first, within the domain
    assert asked.decision.source == "tolerant" and asked.decision.confirm and sent.sent == []
    assert "?" in asked.reply and asked.reply != phrase("ru", "agent.cannot_help")
    assert turn(c, "нет", "ru").reply and sent.sent == []
    turn(c, text, "ru")
    turn(c, "да", "ru")
    assert sent.sent == [("bl/set", "ON")]


@pytest.mark.parametrize("lang,text", [
    ("ru", "не гаси свет в спальне"), ("hi", "बेडरूम की बत्ती बंद मत करो"), ("en", "don't switch the bedroom lamp on"),
    ("ru", "не мог бы ты не выключать-ка свет в спальне"),  # the courtesy set apart, the denial still said
    ("ru", "телевизор не выключай"),  # a template asks "телевизор не выключили?": its "не" reads state, never acts
])
def test_a_negation_is_never_read_as_the_request_it_denies(home: tuple[Components, Sent, Model], lang: str,
                                                           text: str) -> None:
    c, sent, _ = home
    assert c.router().tolerant.match(text, lang) is None
    turn(c, text, lang)
    assert sent.sent == []


def test_a_reading_torn_between_actions_lets_the_model_choose_within_the_domain(
        home: tuple[Components, Sent, Model]) -> None:
    c, sent, model = home
    decision = c.router().decide("count my alarms", "en")  # ("how many alarms do i have" is a template's now)
    assert decision.source == "model" and sent.sent == []
    (_, among), = model.asked
    assert among and "list_alarms" in among
    assert not {"turn_on", "unlock_door", "power_off"} & set(among)  # not the home's or the computer's tools


def test_a_strong_reading_torn_between_actions_the_model_cannot_settle_is_asked_and_done_only_on_yes(
        home: tuple[Components, Sent, Model]) -> None:
    """"Погасыка свет в спальне" (whisper's "погаси-ка"): off, or whether it is off, score alike. The model chooses
    between them first; when it finds nothing, the best reading is a question, not "I can't help with that"."""
    c, sent, model = home
    text = "Погасыка свет в спальне."
    asked = turn(c, text, "ru")
    assert model.asked and model.asked[0][1]  # the model first, told the tied tools
    assert asked.decision.source == "tolerant" and asked.decision.confirm and sent.sent == []
    assert "?" in asked.reply and asked.reply != phrase("ru", "agent.cannot_help")
    assert turn(c, "нет", "ru").reply and sent.sent == []
    turn(c, text, "ru")
    turn(c, "да", "ru")
    assert sent.sent and all(payload == "OFF" for _, payload in sent.sent)


def test_a_middling_reading_torn_between_actions_is_asked_too(home: tuple[Components, Sent, Model]) -> None:
    """"Заприкав входную дверь на ночь" ("запри-ка", glued): locking it (0.74, below `act`) or whether it is locked
    (0.66). A reading a question would be asked about on its own is asked about when the model finds nothing."""
    c, sent, model = home
    decision = c.router().decide("Заприкав входную дверь на ночь.", "ru")
    assert model.asked and decision.source == "tolerant" and decision.confirm, decision
    assert [(call.name, call.arguments.get("door")) for call in decision.calls] == [("lock_door", "front door")]
    assert sent.sent == []


def test_a_question_torn_between_readings_is_never_asked_as_an_action(home: tuple[Components, Sent, Model]) -> None:
    c, sent, model = home
    decision = c.router().decide("Погасыка свет в спальне?", "ru")  # said as a question: whether, never "turn it off"
    assert not (decision.kind == "call" and any(call.name == "turn_off" for call in decision.calls)), decision
    assert sent.sent == []


@pytest.mark.parametrize("lang,text,topic", [
    ("ru", "в спальне что-то странное", "home"),  # a room, and no request any template or the model reads
    ("en", "thermostat to nineteen and a half", "home"),
    ("hi", "बेडरूम में कुछ गड़बड़ है", "home"),
    ("en", "no school tomorrow, cancel the 5:30 alarm", "alarms"),  # "no school" read as a denial: still alarms
    ("ru", "выключен музыку пожалуйста", "media"),
    ("en", "sing me a song", "media"),  # the thing named says what it is about, though no reading takes it
    ("hi", "अलार्म का झंझट है यार", "alarms"),
])
def test_a_request_naming_something_known_but_unread_is_asked_about_never_refused(
        home: tuple[Components, Sent, Model], lang: str, text: str, topic: str) -> None:
    c, sent, _ = home
    result = turn(c, text, lang)
    assert sent.sent == [] and result.decision.kind == "abstain"
    assert result.reply == phrase(lang, f"unclear.{topic}")
    assert result.reply.endswith("?") and result.reply != phrase(lang, "agent.cannot_help")


@pytest.mark.parametrize("lang,text", [
    ("en", "frobnicate the zorblax"), ("ru", "сделай что-нибудь интересное"), ("hi", "कुछ मज़ेदार करो"),
    ("en", "tell me about the tell-tale heart"),  # "tell" is not "telly", the TV's alias: nothing of the home named
])
def test_a_request_naming_nothing_known_keeps_the_generic_refusal(home: tuple[Components, Sent, Model], lang: str,
                                                                 text: str) -> None:
    c, sent, _ = home
    result = turn(c, text, lang)
    assert sent.sent == []
    assert not (result.decision.say or "").startswith("unclear.")  # the generic refusal, or what cannot be done
    assert result.reply in (phrase(lang, "agent.cannot_help"), phrase(lang, "decline.knowledge"))


def test_the_tier_can_be_turned_off(home: tuple[Components, Sent, Model]) -> None:
    c, sent, model = home
    c.cfg.agent.tolerant = False
    c._cache.pop("router", None)  # (the fixture turned it on)
    turn(c, "не мог бы ты включить-ка лампу в спальне", "ru")
    assert sent.sent == [] and [t for t, _ in model.asked] == ["не мог бы ты включить-ка лампу в спальне"]


@pytest.mark.parametrize("text,said", [
    ("Зажги, калампу в спальне.", ["зажги", "лампу", "в", "спальне"]),
    ("какая температура на кухне", ["какая", "температура", "на", "кухне"]),  # a word of the templates' own
    ("включи камеру", ["включи", "камеру"]),  # nothing the templates or the home know after "ка", and short
])
def test_a_particle_run_into_the_next_word_is_set_apart_only_from_a_word_nobody_knows(
        home: tuple[Components, Sent, Model], text: str, said: list[str]) -> None:
    c, _, _ = home
    assert c.router().tolerant.read(text, "ru").said == said


def test_particles_and_fillers_are_set_apart_not_read() -> None:
    assert tokens_of("Погаси-ка свет!") == ["погаси", "ка", "свет"]
    assert tokens_of("ज़रा 7:30 बजे") == ["जरा", "7:30", "बजे"]
    assert tokens_of("Свет включи. Будильник на 7:30.") == ["свет", "включи", "будильник", "на", "7:30"]
    assert tokens_of("вентилятор на 50%") == ["вентилятор", "на", "50", "%"]  # the sign as the templates say it


def test_the_bags_are_built_from_every_language_and_scored(home: tuple[Components, Sent, Model]) -> None:
    c, _, _ = home
    matcher = c.router().tolerant
    assert isinstance(matcher, TolerantMatcher)
    for lang in ("en", "ru", "hi"):
        assert len(matcher.index(lang).bags) > 1000
    ranked = matcher.scores("погаси свет на кухне", "ru")
    assert ranked[0].intent == "turn_off" and ranked[0].score >= 0.99
    assert all(m.score < ranked[0].score for m in ranked[1:])


@pytest.mark.parametrize("text,percent", [
    # (sentences the templates miss: they read "… at full brightness" themselves)
    ("kitchen light, full brightness please", 100),  # "full" sounds like "for", which the templates read as four
    ("desk lamp half brightness", 50),
])
def test_a_level_is_the_word_said_never_a_number_it_sounds_like(text: str, percent: int) -> None:
    from hearthd.evaluation.evaluate import NoModel, load_home

    from .conftest import ROOT

    model = NoModel()
    decision = load_home(ROOT / "tests" / "data" / "commands" / "home.yaml").router(lambda: model).decide(text, "en")
    assert decision.source == "tolerant" and model.asked == []
    assert [(c.name, c.arguments.get("percent")) for c in decision.calls] == [("set_brightness", percent)]


@pytest.mark.parametrize("lang,text,device", [
    ("hi", "bathroom ki light on karo", "Bathroom Light"),  # "bathroom" sounds like "bedroom", and the home has both
    ("hi", "बाथरूम की लाइट जला दो", "Bathroom Light"),
    ("en", "bedroom light off please", "Bedroom Light"),
    ("ru", "свет в ванной включи", "Bathroom Light"),
])
def test_a_word_the_home_has_is_heard_as_itself_never_as_another_it_sounds_like(lang: str, text: str,
                                                                                device: str) -> None:
    """The tier alone (the strict templates read these too): a room or name the home has, said, is that one; read as
    another that sounds like it, the light in the other room went on."""
    from hearthd.evaluation.evaluate import NoModel, load_home

    from .conftest import ROOT

    matcher = load_home(ROOT / "tests" / "data" / "commands" / "home.yaml").router(lambda: NoModel()).tolerant
    decision = matcher.match(text, lang)
    assert decision is not None and decision.kind == "call", text
    assert [c.arguments.get("device", "").lower() for c in decision.calls] == [device.lower()], text


@pytest.mark.parametrize("text", [
    "so how much time is still left on the timer",
    "how much time is there left on the timer",
    "how long is there still left on my timer",
])
def test_arguments_come_from_the_words_said_never_from_a_template_word_that_was_not(text: str) -> None:
    """The nearest template sentence has words the user did not say ("... left on of the timer"); read with them, the
    timer asked about was one named "of the", which no timer is, and hearthd answered there was none."""
    from hearthd.evaluation.evaluate import NoModel, load_home

    from .conftest import ROOT

    model = NoModel()
    router = load_home(ROOT / "tests" / "data" / "commands" / "home.yaml").router(lambda: model)
    decision = router.decide(text, "en")  # ("still": a word no template has, so the model reads it first, and declines)
    assert decision.source == "tolerant"
    assert [(c.name, c.arguments) for c in decision.calls] == [("timer_remaining", {})], text


@pytest.mark.parametrize("lang,text,word", [
    ("en", "kill the lights in the attic", "kill"),  # the verb, not the colour "cool" heard nearly
    ("en", "kill the lamp", "kill"),
    ("ru", "включи свет в машине", "машине"),  # not the Coffee Machine's "machine" (one word of a name: said exactly)
])
def test_a_word_the_templates_say_or_a_word_of_a_name_is_never_a_value_heard_nearly(lang: str, text: str,
                                                                                    word: str) -> None:
    from hearthd.evaluation.evaluate import NoModel, load_home

    from .conftest import ROOT

    router = load_home(ROOT / "tests" / "data" / "commands" / "home.yaml").router(lambda: NoModel())
    reading = router.tolerant.read(text, lang)
    at = next(i for i, (a, b) in enumerate(reading.spans) if reading.said[a:b] == [word])
    assert not [k for k in reading.options[at] if k.startswith("{") and k not in ("{*}", "{#}")], reading.options[at]
    decision = router.decide(text, lang)
    assert not (decision.kind == "call" and not decision.confirm and any(
        c.name == "set_color" or c.arguments.get("device") == "Coffee Machine" for c in decision.calls)), decision


@pytest.mark.parametrize("lang,text,pair", [
    ("en", "start counting down 11 minutes for the eggs", ("for", "the")),  # "forthe" sounds like "would"
    ("en", "count down ten minutes for the rice please", ("the", "rice")),  # "therice" like "through"
])
def test_a_template_word_said_as_it_is_is_never_joined_to_the_next_as_one_word(lang: str, text: str,
                                                                               pair: tuple[str, str]) -> None:
    """Two words are heard for one ("ты мир" for "таймер") only where neither is a template word as said: "for the"
    was read as "would" (a word only a nap's "would like to" has), the timer's sentences scored below the tier's bar,
    and sentences that merely sound like the whole were written out and weighed against the audio instead (measured:
    55 → 490 ms after the last word on the streaming path, bench/latency.py's "… for the eggs")."""
    from hearthd.evaluation.evaluate import NoModel, load_home

    from .conftest import ROOT

    matcher = load_home(ROOT / "tests" / "data" / "commands" / "home.yaml").router(lambda: NoModel()).tolerant
    reading = matcher.read(text, lang, loose=True)
    at = reading.said.index(pair[0])
    assert (at, at + 1) in reading.spans and (at + 1, at + 2) in reading.spans, reading.spans
    bags = matcher._bags(reading, matcher.index(lang))
    assert bags and bags[0].intent == "set_timer" and bags[0].score >= matcher.ask, bags[:3]


@pytest.mark.parametrize("lang,text", [
    ("en", "turn on the coffee machine at 6 am"),
    ("en", "could you close the bedroom blinds at 10 pm please"),
    ("en", "switch the kitchen light off at eleven o'clock"),
    ("en", "in twenty minutes turn off the ceiling fan"),
    ("en", "can you switch off the kitchen lights at midnight"),
    ("en", "lock the front door at quarter to eleven"),
    ("en", "turn on the bedroom lamp at sunset"),
    ("en", "please switch the landing light off by 11 tonight"),
    ("ru", "выключи свет на кухне в полночь"),
    ("hi", "रात को दस बजे सामने का दरवाज़ा लॉक कर देना"),
    ("ru", "включи кофемашину в шесть утра"),
    ("ru", "закрой жалюзи в спальне в десять часов"),
    ("ru", "через полчаса выключи свет на кухне"),
    ("hi", "सुबह छह बजे कॉफी मशीन चालू कर देना"),
    ("hi", "दस मिनट में पंखा बंद कर दो"),
])
def test_a_device_command_asked_for_later_is_not_done_now_and_says_so(home: tuple[Components, Sent, Model],
                                                                      lang: str, text: str) -> None:
    """What the templates read without its time is what was asked for later: hearthd does things only now and says
    so, in the user's language, without asking the model (which, given the whole, read the time's number as a
    brightness or a blind's position); nothing is sent to the home."""
    c, sent, model = home
    result = turn(c, text, lang)
    assert sent.sent == [] and model.asked == [], (result.reply, model.asked)
    assert result.reply == phrase(lang, "check.later")


@pytest.mark.parametrize("lang,text", [
    ("en", "set the bedroom lamp at 30 percent"),  # a level, not a time
    ("en", "turn off the kitchen light at the switch"),  # no number at all
    ("ru", "включи свет на кухне на два часа"),  # for two hours: now
    ("ru", "сделай свет в спальне в 2 раза ярче"),
])
def test_a_number_or_a_place_that_is_no_time_is_no_request_for_later(home: tuple[Components, Sent, Model], lang: str,
                                                                     text: str) -> None:
    c, sent, model = home
    result = turn(c, text, lang)
    assert result.reply != phrase(lang, "check.later")
    # done, asked of the model, or read as a call (the lamp of this home that cannot dim says so)
    assert sent.sent or model.asked or (result.decision is not None and result.decision.kind == "call"), result.reply


@pytest.mark.parametrize("lang,text,commands", [
    # Hindi asks with the verb's "-ना" form, gently or for later: "… जला देना", "… बंद करना", "… खोल दीजियेगा"
    ("hi", "बेडरूम का लैंप जला देना", {("bl/set", "ON")}),
    ("hi", "पंखा बंद करना", {("cf/set", "OFF")}),
    ("hi", "बेडरूम के पर्दे खोल दीजियेगा", {("bb/set", "OPEN")}),
    ("hi", "कॉफी मशीन चलाना", {("cm/set", "ON")}),
    ("hi", "pankha band kar dena", {("cf/set", "OFF")}),
])
def test_a_hindi_request_said_with_the_verbs_na_form_is_done(home: tuple[Components, Sent, Model], lang: str,
                                                            text: str, commands: set[tuple[str, str]]) -> None:
    c, sent, model = home
    result = turn(c, text, lang)
    assert set(sent.sent) == commands and model.asked == [], (result.reply, sent.sent, model.asked)


@pytest.mark.parametrize("text", ["कोई अच्छा गाना", "मुझे खाना", "बहुत पुराना"])
def test_a_noun_ending_in_na_is_no_verb(text: str) -> None:
    from hearthd.agent.fastpath import as_meant

    assert as_meant(text, "hi") == text  # "गाना" (a song), "खाना" (food) are never made into "गाओ", "खाओ"
