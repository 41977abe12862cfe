import pytest

from hearthd.config import SUPPORTED_LANGUAGES
from hearthd.language import language_of_text
from hearthd.locale import LocaleError, phrase, phrases, system_prompt


def test_every_phrase_exists_in_every_language() -> None:
    keys = {lang: set(phrases(lang)) for lang in SUPPORTED_LANGUAGES}
    for lang, have in keys.items():
        assert have == keys["en"], f"{lang}: missing {keys['en'] - have}, extra {have - keys['en']}"


def test_placeholders_match_across_languages() -> None:
    import string

    def fields(text: str) -> set[str]:
        return {f for _, f, _, _ in string.Formatter().parse(text) if f}

    for key, text in phrases("en").items():
        for lang in ("hi", "ru"):
            assert fields(phrases(lang)[key]) == fields(text), f"{lang}:{key}"


def test_phrase_fills_and_scripts() -> None:
    assert phrase("en", "alarm.set", time="7:30") == "Alarm set for 7:30."
    assert any("\u0400" <= c <= "\u04ff" for c in phrase("ru", "alarm.set", time="7:30"))
    assert any("\u0900" <= c <= "\u097f" for c in phrase("hi", "alarm.set", time="7:30"))
    with pytest.raises(LocaleError):
        phrase("en", "alarm.nope")


def test_system_prompts_exist() -> None:
    for lang in SUPPORTED_LANGUAGES:
        assert "tool" in system_prompt(lang)


@pytest.mark.parametrize("text,lang", [
    ("set an alarm", "en"), ("поставь будильник", "ru"), ("अलार्म लगाओ", "hi"), ("alarm 7:30 पर लगाओ", "hi"),
    ("12345", "en"),
])
def test_language_of_text(text: str, lang: str) -> None:
    assert language_of_text(text, ["en", "hi", "ru"]) == lang
