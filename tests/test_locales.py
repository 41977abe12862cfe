import pytest

from hearthd.language import agreeing_language, language_of_text
from hearthd.locale import LocaleError, languages, phrase, phrases, system_prompt


def test_every_phrase_exists_in_every_language() -> None:
    keys = {lang: set(phrases(lang)) for lang in languages()}
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
    for lang in languages():
        assert "tool" in system_prompt(lang)


@pytest.mark.parametrize("text,lang", [
    ("set an alarm", "en"), ("поставь будильник", "ru"), ("अलार्म लगाओ", "hi"), ("alarm 7:30 पर लगाओ", "hi"),
    ("12345", "en"),
    # romanised Hindi is Hindi; English that happens to contain "do" or "band" stays English
    ("kitchen ki light on karo", "hi"), ("subah 6 baje ka alarm laga do", "hi"), ("volume thoda kam karo", "hi"),
    ("set an alarm for 7 and do it", "en"), ("turn on the band music", "en"), ("pause the music", "en"),
    # a short command ending on a Hindi verb is Hindi ("timer roko" was asked "For how long?"); English ending on
    # "do" or "band", or a Hindi verb inside a longer English sentence, stays English
    ("timer roko", "hi"), ("kuch gaane chalao", "hi"), ("bedroom light jalao", "hi"), ("alarm hatao", "hi"),
    ("what should I do", "en"), ("play the band", "en"), ("tell me about the karo family reunion tonight", "en"),
])
def test_language_of_text(text: str, lang: str) -> None:
    assert language_of_text(text, ["en", "hi", "ru"]) == lang


@pytest.mark.parametrize(("text", "tag", "kept"), [
    ("set a timer for 10 minutes", "ru", None),  # wholly English: read as such, whatever the client's language
    ("close the bedroom blinds", "hi", None),
    ("ужин готов", "en", None),
    ("खाना तैयार है", "en-US", None),
    ("front door kholo", "hi", "hi"),  # romanised Hindi the word-count rule alone would not call Hindi
    ("haan ji", "hi", "hi"),
    ("front door खोलो", "hi", "hi"),  # code-mixed: a word in its own letters
    ("включи TV", "ru", "ru"),
    ("light band kar do", "hi-IN", "hi"),
    ("turn off the kitchen light", "en-GB", "en"),
    ("7:30", "ru", None),  # no letters: the conversation's own language
    ("выключи свет", "de", None),  # a language hearthd does not have
])
def test_a_clients_language_holds_when_the_words_agree(text: str, tag: str, kept: str | None) -> None:
    assert agreeing_language(text, tag, ["en", "hi", "ru"]) == kept


@pytest.mark.parametrize("urdu,devanagari", [
    ("سات بجے کا الارم لگاؤ", "सात बजे का अलारम लगाओ"),
    ("چھ بجے", "छ बजे"),
    ("already हिंदी", "already हिंदी"),
])
def test_urdu_script_hindi_is_written_in_devanagari(urdu: str, devanagari: str) -> None:
    from hearthd.language import rules

    assert rules("hi").transcript(urdu) == devanagari  # Hindi's own code (hearthd/languages/hi.py)


def test_every_locale_file_exists_in_every_language() -> None:
    """A file added for one language (answers, split words, spoken forms…) must exist for all of them."""
    from importlib import resources

    names = {lang: {e.name for e in resources.files("hearthd.locales").joinpath(lang).iterdir() if e.is_file()}
             for lang in ("en", "ru", "hi")}
    shared = {"phrases.toml", "system_prompt.txt", "grounding.toml", "numbers.toml", "answers.toml", "split.toml",
              "spoken.toml", "tools.toml"}
    for lang, files in names.items():
        assert shared <= files, (lang, shared - files)


def test_every_live_tool_is_described_in_every_language() -> None:
    from hearthd.tools.alarms import AlarmBook
    from hearthd.tools.registry import _descriptions

    for lang in ("en", "ru", "hi"):
        missing = [t.name for t in AlarmBook().tools() if t.name not in _descriptions(lang)]
        assert missing == [], (lang, missing)
