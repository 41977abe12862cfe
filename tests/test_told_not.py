"""A request told not to be done ("don't turn off the light", "не выключай свет", "लाइट बंद मत करो"): nothing is
done, and hearthd says it leaves things as they are. These went to the model, which refused as if it had not
understood ("Sorry, I'm not sure what to do with the lights") or, worse, could act on the request. "Don't forget to
…", a "no" that answers and goes on with a request, and a remark with "don't" in it are not this."""

from __future__ import annotations

import pytest

from hearthd.agent.split import told_not_to
from hearthd.daemon.components import Components

from .spoken_home import Asked, decide

TOLD_NOT = [("en", "don't turn off the light", "turn_off"), ("en", "no, don't turn the lights off", "turn_off"),
            ("en", "please don't cancel my alarm", "cancel_alarm"), ("en", "Do not set an alarm.", "set_alarm"),
            ("en", "never turn off the heater", "turn_off"), ("en", "Don’t close the bedroom blinds!", "close_cover"),
            ("ru", "не выключай свет", "turn_off"), ("ru", "не надо выключать свет", "turn_off"),
            ("ru", "нет, не отменяй будильник", "cancel_alarm"), ("ru", "не закрывай шторы в спальне", "close_cover"),
            ("hi", "लाइट बंद मत करो", "turn_off"), ("hi", "light band mat karna", "turn_off"),
            ("hi", "अलार्म मत लगाओ", "set_alarm"), ("hi", "पंखा बंद मत करना", "turn_off")]


@pytest.mark.parametrize("lang,text,tool", TOLD_NOT)
def test_a_request_told_not_to_be_done_is_left(living_room: Components, lang: str, text: str, tool: str) -> None:
    decision = decide(living_room, text, lang)
    assert (decision.kind, decision.calls, decision.say, decision.source) == (
        "abstain", [], "agent.leave_it", "fastpath"), decision
    assert decision.reason == f"told not to: {tool}"


@pytest.mark.parametrize("lang,text", [("en", "don't forget to set an alarm for 7"),
                                       ("ru", "не забудь поставить будильник на семь"),
                                       ("hi", "अलार्म लगाना मत भूलना"), ("en", "no, turn off the light"),
                                       ("en", "I don't need the light on, turn it off"),
                                       ("ru", "нет, выключи свет"), ("en", "turn off the light")])
def test_what_is_not_told_not_to(lang: str, text: str) -> None:
    """"Don't forget to …" asks for it; "no, turn off the light" answers and asks; the negation of a remark is the
    remark's: none of these is a request told not to be done."""
    assert told_not_to(text, lang) is None


def test_the_request_as_said_plainly() -> None:
    assert told_not_to("No, don't turn off the light!", "en") == "turn off the light"
    assert told_not_to("не надо выключать свет", "ru") == "выключи свет"
    assert told_not_to("light band mat karna", "hi") == "light band karo"


@pytest.mark.parametrize("lang,text,plainly", [
    ("en", "no need to turn the heating on", "turn the heating on"),
    ("en", "you don't have to wake me tomorrow", "wake me tomorrow"),
    ("en", "there's no need to close the blinds", "close the blinds"),
    ("ru", "свет не выключай", "свет выключи"),  # the negation beside its verb, after the thing
    ("ru", "завтра не буди", "завтра разбуди"),
    ("ru", "будить меня не надо", "разбуди меня"),  # after the verb
    ("ru", "на кухне свет выключать не нужно", "на кухне свет выключи"),
])
def test_the_negation_said_after_the_start(lang: str, text: str, plainly: str) -> None:
    assert told_not_to(text, lang) == plainly


@pytest.mark.parametrize("lang,plainly,told", [
    ("en", "turn off the kitchen light", "don't turn off the kitchen light"),
    ("ru", "выключи свет на кухне", "не выключай свет на кухне"),
    ("ru", "поставь будильник на семь", "не ставь будильник на семь"),
    ("hi", "रसोई की बत्ती बंद करो", "रसोई की बत्ती बंद मत करो"),
    ("hi", "लाइट बंद कर दो", "लाइट बंद मत कर दो"),
    ("hi", "light band kar do", "light band mat kar do"),
])
def test_a_request_said_as_told_not_to_and_read_back(lang: str, plainly: str, told: str) -> None:
    """The form the rescoring weighs against the audio, and the negation reader's way back from it."""
    from hearthd.agent.split import told_not_form

    assert told_not_form(plainly, lang) == told
    assert told_not_to(told, lang) == plainly


@pytest.mark.parametrize("lang,text", [("ru", "свет не горит"), ("ru", "свет не включается"),
                                       ("ru", "я не знаю, включи свет"), ("ru", "почему не работает свет"),
                                       ("en", "need to wake up at seven"), ("en", "the light doesn't turn on")])
def test_a_negation_inside_a_remark_is_not_told_not_to(lang: str, text: str) -> None:
    """Russian's "не" later in the utterance counts only beside a verb said as one says what not to do."""
    assert told_not_to(text, lang) is None


def test_a_negation_speech_to_text_ran_into_the_next_word_is_still_one() -> None:
    """Whisper writes Hindi's "मत करना" as "मतकेरना", "मत करो" as "मत्वाण": still a request told not to be done (the
    tolerant tier had turned the fan off); "मतलब" ("I mean") only begins the same."""
    from hearthd.agent.checks import negated

    assert negated("पंखा, बंद, मतकेरना.", "hi") and negated("ये बन्द मत्वाण", "hi")
    assert told_not_to("पंखा, बंद, मतकेरना.", "hi") == "पंखा बंद केरना"
    assert not negated("मेरा मतलब है लाइट बंद करो", "hi")
    assert told_not_to("मेरा मतलब है लाइट बंद करो", "hi") is None
    # written in Latin ("TV Band Matkarna", heard of "टीवी बंद मत करना"): set apart only before a verb
    assert told_not_to("TV Band Matkarna", "hi") == "tv band karo"
    assert told_not_to("matlab light band karo", "hi") is None and told_not_to("matar paneer banao", "hi") is None


@pytest.mark.parametrize("lang,text", [("hi", "पंखा बंद मतकेरना"), ("hi", "पंखा, बंद, मत करना"),
                                       ("en", "don't turn of the kitchen lite"), ("ru", "не выключай свет на кухне")])
def test_nothing_told_not_to_is_done_nor_rewritten_as_a_template(living_room: Components, lang: str, text: str) -> None:
    """Neither acted on, nor offered to whisper's rescoring as the nearest template sentences: those say no negation,
    and the one that fits the audio best is the request itself."""
    router = living_room.router()
    decision = router.decide(text, lang, Asked())
    assert not decision.calls or decision.kind != "call", decision
    assert router.candidates(text, lang) == []
    assert router.candidates(text, lang, foreign=True) == []


@pytest.mark.parametrize("lang,text,tool", [("en", "I'm leaving, don't lock the front door", "lock_door"),
                                            ("en", "don't turn off the heater, it's cold", "turn_off"),
                                            ("ru", "дети спят, не выключай свет", "turn_off"),
                                            ("ru", "завтра выходной, не ставь будильник", "set_alarm")])
def test_told_not_to_with_the_reason_beside_it(living_room: Components, lang: str, text: str, tool: str) -> None:
    decision = decide(living_room, text, lang)
    assert (decision.kind, decision.say, decision.reason) == ("abstain", "agent.leave_it", f"told not to: {tool}")


@pytest.mark.parametrize("lang,text", [("en", "no, turn off the light"), ("en", "nope, turn the lights off"),
                                       ("ru", "нет, выключи свет"), ("hi", "नहीं, लाइट बंद करो")])
def test_a_no_that_puts_right_what_went_before_leaves_the_request(living_room: Components, lang: str,
                                                                  text: str) -> None:
    """"No, turn off the light": the "no" corrects; the request after it is done (it went to the model, which refused
    it as if not understood)."""
    decision = decide(living_room, text, lang)
    assert (decision.kind, [c.name for c in decision.calls]) == ("call", ["turn_off"]), decision


def test_odd_text_never_breaks_the_negation_readers() -> None:
    """Seeded garbage (punctuation alone, a lone "मत", a negation with nothing after it, mixed scripts, long runs):
    each reader answers, and a negation with no request after it is none."""
    import random

    from hearthd.agent.checks import negated
    from hearthd.agent.split import unglued

    rng = random.Random(29)
    pieces = ["मत", "मतलब", "मत्", "don't", "не", "нет", ",", "…", "’", "", " ", "ु", "\u200d", "no", "mat", "do not",
              "आ", "x" * 50, "🙂", "\t", "।", "«", "не надо"]
    for _ in range(400):
        text = " ".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
        for lang in ("en", "ru", "hi"):
            assert isinstance(unglued(text, lang), str)
            assert isinstance(negated(text, lang), bool)
            told = told_not_to(text, lang)
            assert told is None or told.strip()
    assert told_not_to("don't", "en") is None and told_not_to("мат", "hi") is None and told_not_to("मत", "hi") is None
