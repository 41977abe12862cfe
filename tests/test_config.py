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


def test_satellites_and_wyoming_round_trip_and_a_wrong_key_is_named(tmp_path: Path) -> None:
    text = ('[wyoming]\nuri = "tcp://127.0.0.1:10700"\n[[satellites]]\nuri = "tcp://kitchen-pi:10700"\n'
            'area = "Kitchen"\n[[satellites]]\nuri = "tcp://bedroom-pi:10700"\narea = "Bedroom"\n')
    cfg = load_config(write(tmp_path, text), environ={})
    assert [(s.uri, s.area) for s in cfg.satellites] == [("tcp://kitchen-pi:10700", "Kitchen"),
                                                          ("tcp://bedroom-pi:10700", "Bedroom")]
    assert cfg.wyoming.uri == "tcp://127.0.0.1:10700" and load_config(environ={}).wyoming.uri == ""  # off by default
    again = load_config(write(tmp_path, dump_toml(cfg)), environ={})
    assert again.to_dict() == cfg.to_dict()
    with pytest.raises(ConfigError, match=r"satellites\[0\]\.room"):
        load_config(write(tmp_path, '[[satellites]]\nroom = "Kitchen"\n'), environ={})
    with pytest.raises(ConfigError, match=r"satellites\[1\]\.rings"):
        load_config(write(tmp_path, text + 'rings = "everywhere"\n'), environ={})
    with pytest.raises(ConfigError, match=r"satellites\[0\]\.uri"):
        load_config(write(tmp_path, '[[satellites]]\narea = "Kitchen"\n'), environ={})


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


@pytest.mark.parametrize("text, key", [
    ("[mqtt]\nqueue_max = 0\n", "mqtt.queue_max"),  # accepted before, and then nothing could be sent
    ("[mqtt]\ncommand_timeout_s = -1\n", "mqtt.command_timeout_s"),
    ("[mqtt]\nkeepalive_s = 0\n", "mqtt.keepalive_s"),
    ("[agent]\nmax_turn_s = 0\n", "agent.max_turn_s"),
    ("[agent]\nmax_turn_s = nan\n", "agent.max_turn_s"),
    ("[agent]\nmax_calls = 0\n", "agent.max_calls"),
    ("[agent]\nmax_text_chars = 0\n", "agent.max_text_chars"),
    ("[agent]\nmin_relevance = 1.5\n", "agent.min_relevance"),
    ("[vad]\nend_silence_ms = 0\n", "vad.end_silence_ms"),
    ("[vad]\nmax_speech_s = inf\n", "vad.max_speech_s"),
    ("[stt]\nbeam_size = 0\n", "stt.beam_size"),
    ("[alarms]\nrepeat_s = 0\n", "alarms.repeat_s"),
    ("[alarms]\nsnooze_minutes = -5\n", "alarms.snooze_minutes"),
    ("[policy]\nconfirm_timeout_s = 0\n", "policy.confirm_timeout_s"),
    ("[policy]\naudit_keep = 0\n", "policy.audit_keep"),
    ("[audio]\nsample_rate = 0\n", "audio.sample_rate"),
])
def test_a_number_that_makes_no_sense_is_refused_naming_its_key(tmp_path: Path, text: str, key: str) -> None:
    with pytest.raises(ConfigError) as e:
        load_config(write(tmp_path, text), environ={})
    assert e.value.key == key and key in str(e.value)


def test_a_number_from_the_environment_is_checked_too(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as e:
        load_config(write(tmp_path, ""), environ={"HEARTHD__MQTT__QUEUE_MAX": "0"})
    assert e.value.key == "mqtt.queue_max"


def test_sane_edges_are_accepted(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, "[mqtt]\nqueue_max = 1\n[vad]\nspeculate_ms = 0\n[agent]\nmin_relevance = 0\n"),
                      environ={})
    assert cfg.mqtt.queue_max == 1 and cfg.vad.speculate_ms == 0 and cfg.agent.min_relevance == 0


def test_a_binary_config_file_is_a_clear_config_error(tmp_path: Path) -> None:
    """It was `hearthd: internal: 'utf-8' codec can't decode byte ...`."""
    bad = tmp_path / "config.toml"
    bad.write_bytes(b"[mqtt]\nhost = \"\xff\xfe\x00\x89PNG\"\n")
    proc = subprocess.run([sys.executable, "-m", "hearthd", "--config", str(bad), "config", "show"],
                          capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    assert "config error" in proc.stderr and "not a UTF-8 TOML file" in proc.stderr and str(bad) in proc.stderr
    assert "codec" not in proc.stderr and "Traceback" not in proc.stderr


def test_queue_max_zero_is_refused_by_the_cli(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "hearthd", "--config", str(write(tmp_path, "[mqtt]\nqueue_max = 0\n")),
                           "config", "show"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "mqtt.queue_max: must be at least 1, got 0" in proc.stderr


def test_a_config_nested_too_deeply_is_a_config_error_not_a_traceback(tmp_path: Path) -> None:
    """Issue 26: 500 nested arrays made tomllib recurse out of the stack; a start said only "maximum recursion depth
    exceeded" and a SIGHUP reload printed 3,000 lines. Both read the file through load_config."""
    with pytest.raises(ConfigError) as e:
        load_config(write(tmp_path, "[stt]\nlanguages = " + "[" * 500 + "]" * 500 + "\n"), environ={})
    assert "nested too deeply" in str(e.value) and e.value.key.endswith("config.toml")
    with pytest.raises(ConfigError) as e:
        load_config(write(tmp_path, ""), environ={"HEARTHD__STT__LANGUAGES": "[" * 2000 + "]" * 2000})
    assert e.value.key == "stt.languages"


@pytest.mark.parametrize("text,key", [
    ('[stt]\nlanguage = "de"\n', "stt.language"),  # no templates, phrases or voice: every turn failed
    ('[stt]\nlanguage = "EN"\n', "stt.language"),
    ('[general]\ntimezone = "' + "Europe/" + "x" * 249 + '"\n', "general.timezone"),  # [Errno 36] at run
    ('[general]\ntimezone = "Mars/Olympus"\n', "general.timezone"),
    ('[mqtt]\ndiscovery_prefix = "ha/#"\n', "mqtt.discovery_prefix"),  # reconnected every 0.5 s for ever
    ('[mqtt]\ndiscovery_prefix = "/homeassistant/"\n', "mqtt.discovery_prefix"),
    ('[mqtt]\ntopic_base = "+"\n', "mqtt.topic_base"),
    ('[mqtt]\nnode_id = "' + "n" * 300 + '"\n', "mqtt.node_id"),
    ('[mqtt]\nhost = "' + "h" * 300 + '"\n', "mqtt.host"),
    ('[assets]\ncache_dir = "/tmp/' + "d" * 300 + '"\n', "assets.cache_dir"),
    ('[agent]\nmodel_path = "/' + "m/" * 2100 + '"\n', "agent.model_path"),
    ('[wyoming]\nuri = "tcp://[zz"\n', "wyoming.uri"),  # said only when the server failed to start
    ('[wyoming]\nuri = "http://0.0.0.0:10700"\n', "wyoming.uri"),
    ('[[satellites]]\nuri = "tcp://kitchen-pi"\n', "satellites[0].uri"),  # no port: tried for ever
])
def test_a_value_the_running_parts_cannot_serve_is_refused_by_key(tmp_path: Path, text: str, key: str) -> None:
    """Issue 26, item 4: caught at load (and so at a SIGHUP reload and in doctor, which load through here)."""
    with pytest.raises(ConfigError) as e:
        load_config(write(tmp_path, text), environ={})
    assert e.value.key == key, str(e.value)


def test_values_that_can_be_served_still_load(tmp_path: Path) -> None:
    text = ('[stt]\nlanguage = "ru"\n[general]\ntimezone = "Asia/Kolkata"\n'
            '[mqtt]\ndiscovery_prefix = "home/assistant"\nnode_id = "kitchen-pi"\n')
    cfg = load_config(write(tmp_path, text), environ={})
    assert (cfg.stt.language, cfg.general.timezone) == ("ru", "Asia/Kolkata")
    assert cfg.mqtt.discovery_prefix == "home/assistant"
