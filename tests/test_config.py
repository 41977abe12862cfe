import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from hearthd.config import ConfigError, dump_toml, load_config


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "config.toml"
    p.write_text(text, encoding="utf-8")
    return p


def test_no_file_needed(tmp_path: Path) -> None:
    cfg = load_config(environ={"XDG_CONFIG_HOME": str(tmp_path)})
    assert cfg.stt.languages == ["en", "hi", "ru"]
    assert cfg.wake.model == "okay_nabu"
    assert cfg.source == "defaults"


def test_file_overrides_defaults(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, '[wake]\nmodel = "hey_jarvis"\n[vad]\nthreshold = 0.6\n'), environ={})
    assert cfg.wake.model == "hey_jarvis"
    assert cfg.vad.threshold == 0.6
    assert cfg.stt.model == "whisper-base"  # untouched sections keep their defaults


def test_unknown_key_is_reported_with_its_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as e:
        load_config(write(tmp_path, "[stt]\nlangauges = ['en']\n"), environ={})
    assert e.value.key == "stt.langauges"
    assert "unknown key" in str(e.value)


def test_unknown_section(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as e:
        load_config(write(tmp_path, "[sst]\nx = 1\n"), environ={})
    assert e.value.key == "sst"


def test_wrong_type_is_reported_with_its_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as e:
        load_config(write(tmp_path, '[mqtt]\nport = "1883"\n'), environ={})
    assert e.value.key == "mqtt.port"
    assert "expected integer" in str(e.value)


def test_wrong_item_type_in_a_list(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as e:
        load_config(write(tmp_path, "[stt]\nlanguages = ['en', 3]\n"), environ={})
    assert e.value.key == "stt.languages[1]"


def test_int_accepted_for_float(tmp_path: Path) -> None:
    assert load_config(write(tmp_path, "[wake]\nrefractory_s = 3\n"), environ={}).wake.refractory_s == 3.0


def test_unsupported_language(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as e:
        load_config(write(tmp_path, "[stt]\nlanguages = ['en', 'de']\n"), environ={})
    assert e.value.key == "stt.languages"


def test_bad_voice_spec(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as e:
        load_config(write(tmp_path, '[tts.voices]\nru = "festival"\n'), environ={})
    assert e.value.key == "tts.voices.ru"


def test_invalid_toml(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(write(tmp_path, "[stt\n"), environ={})


def test_explicit_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.toml", environ={})


def test_environment_overrides(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, ""), environ={"HEARTHD__MQTT__PORT": "1884", "HEARTHD__WAKE__ENABLED": "false"})
    assert cfg.mqtt.port == 1884
    assert cfg.wake.enabled is False


def test_dump_round_trips(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, '[tts.voices]\nru = "piper:/voices/ru.onnx"\n'), environ={})
    again = load_config(write(tmp_path, dump_toml(cfg)), environ={})
    assert again.to_dict() == cfg.to_dict()
    assert tomllib.loads(dump_toml(cfg))["tts"]["voices"]["ru"] == "piper:/voices/ru.onnx"


def test_cli_config_show_and_error(tmp_path: Path) -> None:
    good = write(tmp_path, "[vad]\nend_silence_ms = 700\n")
    out = subprocess.run([sys.executable, "-m", "hearthd", "--config", str(good), "config", "show"],
                         capture_output=True, text=True, check=True).stdout
    assert tomllib.loads(out)["vad"]["end_silence_ms"] == 700
    bad = write(tmp_path, "[vad]\nend_silence = 700\n")
    proc = subprocess.run([sys.executable, "-m", "hearthd", "--config", str(bad), "config", "show"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "vad.end_silence" in proc.stderr
    assert "Traceback" not in proc.stderr
