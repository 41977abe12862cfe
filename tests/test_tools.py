import asyncio
from datetime import UTC, datetime

import pytest

from hearthd.agent.grammar import NO_TOOL, arguments_grammars
from hearthd.agent.grounding import time_is_grounded
from hearthd.numbers import digits_for_times
from hearthd.tools.alarms import AlarmBook
from hearthd.tools.registry import SchemaError, ToolRegistry, UnknownTool


def clock() -> datetime:
    return datetime(2026, 11, 30, 8, 0, tzinfo=UTC)


def test_alarm_set_list_cancel() -> None:
    book = AlarmBook(now=clock)
    r = asyncio.run(book.set_alarm({"time": "07:30"}))
    assert r.ok and r.phrase == "alarm.set" and r.values["time"] == "7:30"
    assert r.data["at"] == "2026-12-01T07:30:00+00:00"  # 07:30 already passed today → tomorrow
    asyncio.run(book.set_alarm({"time": "21:00"}))
    assert book.pending()[0].at.day == 30  # 21:00 today comes first
    listed = asyncio.run(book.list_alarms({}))
    assert listed.phrase == "alarm.list" and listed.values["count"] == 2
    assert asyncio.run(book.cancel_alarm({})).phrase == "alarm.which"  # two alarms: ask which
    gone = asyncio.run(book.cancel_alarm({"time": "07:30"}))
    assert gone.ok and [a.hhmm for a in book.pending()] == ["21:00"]
    assert not asyncio.run(book.cancel_alarm({"time": "05:00"})).ok
    assert asyncio.run(book.cancel_alarm({})).ok  # only one left: it is the one
    assert asyncio.run(book.list_alarms({})).phrase == "alarm.none"


def test_registry_validates_against_schema() -> None:
    reg = ToolRegistry(AlarmBook(now=clock).tools())
    assert reg.validate("set_alarm", {"time": "06:00"}) == {"time": "06:00"}
    for bad in ({"time": "6:00"}, {"time": "24:00"}, {}, {"time": "06:00", "extra": 1}, {"time": 600}):
        with pytest.raises(SchemaError):
            reg.validate("set_alarm", bad)
    with pytest.raises(UnknownTool):
        reg.validate("get_capital", {})


def test_the_prompt_leaves_out_what_only_the_code_enforces() -> None:
    # Every catalogue token is in every prompt: `additionalProperties` is not shown, and still holds (the registry
    # refuses an extra key, above; the grammar, made from the full schema, cannot write one).
    reg = ToolRegistry(AlarmBook(now=clock).tools())
    for tool in reg:
        shown = tool.openai_schema()["function"]["parameters"]
        assert "additionalProperties" not in str(shown) and tool.parameters["additionalProperties"] is False, tool.name
        assert shown["properties"].keys() == tool.model_parameters["properties"].keys(), tool.name
    grammars = arguments_grammars(reg)
    bare = [t.name for t in reg if not t.model_parameters.get("properties")]
    assert bare and all('args ::= "{" space  "}" space' in grammars[n] for n in bare)  # no property: no key written
    keys = [line.split(" ::=")[0] for line in grammars["snooze"].splitlines() if "-kv ::=" in line]
    assert keys == ["args-minutes-kv"]  # its one declared key, and no rule for any other


def test_argument_grammars_compile_and_hold_the_schema() -> None:
    from llama_cpp import LlamaGrammar

    reg = ToolRegistry(AlarmBook(now=clock).tools())
    grammars = arguments_grammars(reg)
    assert {"set_alarm", "list_alarms", "cancel_alarm", "cancel_all_alarms", "set_timer", "stop"} <= set(grammars)
    for text in grammars.values():
        LlamaGrammar.from_string(text, verbose=False)  # llama.cpp's own parser accepts it
    assert '"2" [0-3]' in grammars["set_alarm"]  # the HH:MM pattern became grammar: 25:99 cannot be written
    assert NO_TOOL not in grammars  # abstaining needs no arguments decoded


@pytest.mark.parametrize("utterance,lang,grounded", [
    ("set an alarm for seven thirty", "en", True),
    ("wake me at 6", "en", True),
    ("what is the capital of France", "en", False),
    ("turn off the lights", "en", False),
    ("поставь будильник на семь утра", "ru", True),
    ("какая столица Франции", "ru", False),
    ("सुबह छह बजे का अलार्म लगाओ", "hi", True),
    ("फ्रांस की राजधानी क्या है", "hi", False),
])
def test_time_grounding(utterance: str, lang: str, grounded: bool) -> None:
    assert time_is_grounded(utterance, lang) is grounded


@pytest.mark.parametrize("utterance,lang,value,grounded", [
    ("Set an alarm for 7.30 am.", "en", "07:30", True),
    ("wake me at 6 pm", "en", "18:00", True),
    ("quarter to eight", "en", "07:45", True),  # the hour after counts
    ("set an alarm for seven", "en", "09:00", False),  # a different hour than the one said
    ("в половине восьмого", "ru", "07:30", True),
    ("एक चुटकुला सुनाओ", "hi", "10:00", False),  # "one joke": a number, but not this hour
    ("सुबह 6 बजे का अलार्म लगाओ", "hi", "06:00", True),
])
def test_time_grounding_checks_the_hour(utterance: str, lang: str, value: str, grounded: bool) -> None:
    assert time_is_grounded(utterance, lang, value) is grounded


@pytest.mark.parametrize("text,expected", [
    ("सुबह छह बजे का अलार्म लगाओ", "सुबह 6 बजे का अलार्म लगाओ"),
    ("कल सुबह साढ़े छह बजे का अलार्म लगा दो", "कल सुबह 6:30 बजे का अलार्म लगा दो"),  # "लगा दो" stays a verb
    ("सवा आठ बजे", "8:15 बजे"),
    ("पौने नौ बजे", "8:45 बजे"),
    ("पौने एक बजे", "12:45 बजे"),
    ("दो बजे", "2 बजे"),
    ("ढाई बजे", "2:30 बजे"),
    ("saade saat baje alarm lagao", "7:30 baje alarm lagao"),
])
def test_hindi_time_words_become_digits(text: str, expected: str) -> None:
    assert digits_for_times(text, "hi") == expected


@pytest.mark.parametrize("text,expected", [
    ("поставь будильник на семь тридцать утра", "поставь будильник на 7:30 утра"),
    ("разбуди в восемь сорок пять", "разбуди в 8:45"),
    ("в половине восьмого", "в 7:30"),
    ("половина первого", "12:30"),
    ("на шесть утра", "на 6 утра"),
    ("в 7 тридцать", "в 7:30"),
    ("через час", "через час"),  # an hour, not "1"
    ("через пять минут", "через 5 минут"),
])
def test_russian_time_words_become_digits(text: str, expected: str) -> None:
    assert digits_for_times(text, "ru") == expected


def test_languages_without_number_table_are_untouched() -> None:
    assert digits_for_times("set an alarm for seven", "en") == "set an alarm for seven"


def test_free_text_labels_are_never_decoded_only_read_from_templates() -> None:
    reg = ToolRegistry(AlarmBook(now=clock).tools())
    grammars = arguments_grammars(reg)
    assert "label" not in grammars["set_alarm"] and "repeat" in grammars["set_alarm"]
    assert "label" in reg.get("set_alarm").parameters["properties"]  # still declared: templates fill it
