"""A language is its folder: a fourth one made from files alone (a copy of English with a few words changed) is
supported, validated and spoken in, with no Python edited (README "Adding a language")."""

import json
import os
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from hearthd import locale
from hearthd.config import ConfigError, load_config
from hearthd.language import language_of_text, rules
from hearthd.spoken import number_words, plural_class, say_count


def _new_language(root: Path, code: str = "xx") -> Path:
    """locales/en copied as `code`, with "wecker" for "alarm" in one template, the checks and the reply."""
    folder = root / code
    shutil.copytree(str(locale.folder("en")), folder)
    alarms = folder / "sentences" / "alarms.yaml"
    text = alarms.read_text(encoding="utf-8")
    assert '          - "alarm {time}"\n' in text
    alarms.write_text(text.replace('          - "alarm {time}"\n', '          - "wecker {time}"\n'), encoding="utf-8")
    checks = folder / "checks.toml"  # the words that say a sentence is about an alarm
    text = checks.read_text(encoding="utf-8")
    assert '\nalarm = ["alarm*"' in text
    checks.write_text(text.replace('\nalarm = ["alarm*"', '\nalarm = ["wecker", "alarm*"'), encoding="utf-8")
    phrases = folder / "phrases.toml"
    text = phrases.read_text(encoding="utf-8")
    assert 'set = "Alarm set for {time}."' in text
    phrases.write_text(text.replace('set = "Alarm set for {time}."', 'set = "Wecker gestellt: {time}."'),
                       encoding="utf-8")
    return folder


def test_the_languages_are_the_folders_that_carry_the_required_files(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    installed = resources.files("hearthd.locales")
    folders = sorted(e.name for e in installed.iterdir()
                     if e.is_dir() and all(e.joinpath(name).is_file() for name in locale.REQUIRED))
    monkeypatch.delenv(locale.ENV, raising=False)
    assert list(locale.languages()) == folders == ["en", "hi", "ru"]

    _new_language(tmp_path)
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "phrases.toml").write_text("", encoding="utf-8")  # not every required file: not a language
    monkeypatch.setenv(locale.ENV, str(tmp_path))
    assert locale.languages() == ("en", "hi", "ru", "xx")
    assert load_config(environ={"HEARTHD__GENERAL__LANGUAGE": '"xx"'}).general.language == "xx"
    monkeypatch.delenv(locale.ENV)
    with pytest.raises(ConfigError, match="unsupported language 'xx'"):
        load_config(environ={"HEARTHD__GENERAL__LANGUAGE": '"xx"'})


def test_a_language_with_no_code_of_its_own_gets_the_defaults(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Not another language's rules: numbers as digits, one/many plurals (never the Russian words)."""
    _new_language(tmp_path)
    monkeypatch.setenv(locale.ENV, str(tmp_path))
    assert rules("xx").script == "latin" and rules("xx").number_words is None
    assert number_words(21, "xx") == "21" and [plural_class(n, "xx") for n in (1, 2, 5, 21)] == [0, 1, 1, 1]
    assert say_count(3, "alarm", "xx") == "3 alarms"
    assert language_of_text("wecker 7:30", ["xx"]) == "xx"


def test_a_new_latin_script_language_does_not_take_english_sentences(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A copy of English added as "de" (its code sorts before "en"): English is still read as English, and the new
    language's own word as the new language, whatever order the languages are listed in."""
    _new_language(tmp_path, "de")
    monkeypatch.setenv(locale.ENV, str(tmp_path))
    for allowed in (["de", "en", "hi", "ru"], ["en", "de"]):
        assert language_of_text("turn off the kitchen light", allowed, "en") == "en"
        assert language_of_text("set an alarm for 6 am", allowed, "en") == "en"
        assert language_of_text("wecker 7:30", allowed, "en") == "de"  # only the new language has the word
    # the conversation goes on in the new language: a sentence both read alike stays in it
    assert language_of_text("turn off the kitchen light", ["de", "en"], "de") == "de"


def test_a_fast_path_turn_in_a_language_made_from_files_alone(tmp_path: Path) -> None:
    _new_language(tmp_path / "locales")
    env = {**os.environ, locale.ENV: str(tmp_path / "locales"), "XDG_STATE_HOME": str(tmp_path / "state")}
    proc = subprocess.run([sys.executable, "-m", "hearthd", "ask", "--lang", "xx", "wecker 7:30", "--json"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    calls = [(e["name"], e["arguments"], e["source"]) for e in events if e["type"] == "tool_call"]
    assert calls == [("set_alarm", {"time": "07:30"}, "fastpath")]
    assert [(e["text"], e["lang"]) for e in events if e["type"] == "reply"] == [("Wecker gestellt: 7:30.", "xx")]

    unknown = subprocess.run([sys.executable, "-m", "hearthd", "ask", "--lang", "xx", "wecker 7:30"],
                             capture_output=True, text=True, timeout=120, env={**env, locale.ENV: ""})
    assert unknown.returncode == 2 and "invalid choice: 'xx'" in unknown.stderr  # without the folder: unknown


def test_a_language_declares_its_voice_library_and_window_in_its_folder(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """language.toml, not Python, says a language's default voice, whether Home Assistant's sentence library has it,
    and whether whisper reads it from the short window; a language that says nothing gets none of them."""
    from hearthd.agent.library import covered
    from hearthd.config import Config

    folder = _new_language(tmp_path, "de")
    (folder / "language.toml").write_text('script = "latin"\nvoice = "espeak:de"\n', encoding="utf-8")
    plain = _new_language(tmp_path, "xx")
    (plain / "language.toml").write_text('script = "latin"\n', encoding="utf-8")
    monkeypatch.setenv(locale.ENV, str(tmp_path))
    cfg = Config()
    assert cfg.tts.voices["de"] == "espeak:de" and "xx" not in cfg.tts.voices
    assert cfg.tts.voices["ru"] == "festival:msu_ru_nsh_clunits"  # the installed ones keep their own
    assert cfg.stt.window_languages == ["en"]
    assert [covered(lang) for lang in ("en", "ru", "hi", "de", "xx")] == [True, True, True, False, False]
    assert load_config(environ={"HEARTHD__GENERAL__LANGUAGE": '"de"'}).tts.voices["de"] == "espeak:de"


def test_a_language_reads_the_languages_it_declares_mixed_in(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Which other language's words turn up in a language's speech is its folder's to say (language.toml `mixes`),
    not code's: Hindi and Russian read English beside their own ("front door खोलो", "5 december"), English and a new
    language that says nothing read only themselves, and a new one that names Russian reads Russian dates."""
    from datetime import date

    from hearthd.dates import parse_date

    monkeypatch.delenv(locale.ENV, raising=False)
    assert [locale.read_with(lang) for lang in ("en", "hi", "ru")] == [("en",), ("hi", "en"), ("ru", "en")]
    today = date(2026, 12, 1)
    assert parse_date("5 december", "ru", today) == parse_date("5 декабря", "ru", today) == date(2026, 12, 5)

    plain = _new_language(tmp_path, "xx")
    (plain / "language.toml").write_text('script = "latin"\n', encoding="utf-8")
    mixing = _new_language(tmp_path, "xy")
    (mixing / "language.toml").write_text('script = "latin"\nmixes = ["ru", "zz", "xy"]\n', encoding="utf-8")
    monkeypatch.setenv(locale.ENV, str(tmp_path))
    assert locale.read_with("xx") == ("xx",) and locale.read_with("xy") == ("xy", "ru")  # unknown and itself dropped
    assert parse_date("5 декабря", "xx", today) is None
    assert parse_date("5 декабря", "xy", today) == date(2026, 12, 5)
    assert parse_date("december 5", "xx", today) == date(2026, 12, 5)  # its own (a copy of English's) months


def test_a_language_s_own_code_is_its_module_and_no_other_language_gets_it() -> None:
    """Russian's and Hindi's code lives in hearthd/languages/<code>.py; no other module names a language, but for
    the voice engines, whose voices each speak one (Kokoro's hf_alpha Hindi, festival's msu_ru_nsh Russian)."""
    import re

    from hearthd.spoken import number_words

    assert number_words(21, "ru") == "двадцать один" and [plural_class(n, "ru") for n in (1, 3, 5)] == [0, 1, 2]
    assert number_words(21, "hi") == "इक्कीस" and rules("hi").reads_latin is not None
    assert rules("en").number_words is None and rules("en").reads_latin is None
    root = Path(__file__).resolve().parent.parent / "hearthd"
    named = re.compile(r"""(?<![\w-])["'](ru|hi)["']""")  # (English: general.language's default, named once)
    offenders = [f"{path.relative_to(root)}:{n}" for path in sorted(root.rglob("*.py"))
                 if "languages" not in path.parts and "evaluation" not in path.parts
                 and path.name not in ("kokoro.py", "festival.py")
                 for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                 if named.search(line) and not line.lstrip().startswith(("#", '"""'))]
    assert offenders == [], offenders
