import subprocess
import sys
from pathlib import Path


def hearthd(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run([sys.executable, "-m", "hearthd", *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})


def test_models_list_shows_every_catalogue_entry_and_its_source() -> None:
    proc = hearthd("models", "list")
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line for line in proc.stdout.splitlines() if line.strip()}
    for name in ("qwen2.5-coder-0.5b", "whisper-base", "piper-en-joe"):
        assert rows[name].split()[4] in ("cache", "pack")  # the set-up made them available offline
    assert "missing" in rows["botpsy-0.8b"] and "agent.model_path" in rows["botpsy-0.8b"]


def test_models_verify_hashes_the_cached_files() -> None:
    proc = hearthd("models", "verify", "whisper-base", "piper-en-joe")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == ["whisper-base: ok", "piper-en-joe: ok"]


def test_unknown_model_is_one_clear_line() -> None:
    proc = hearthd("models", "fetch", "no-such-model")
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr and "no-such-model" in proc.stderr


def test_say_writes_speech_in_each_language(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import wave

    for lang, text in (("en", "Hello there."), ("ru", "Привет."), ("hi", "नमस्ते।")):
        out = tmp_path / f"{lang}.wav"
        proc = hearthd("say", text, "--lang", lang, "--output", str(out))
        assert proc.returncode == 0, proc.stderr
        with wave.open(str(out)) as w:
            assert w.getnframes() > w.getframerate() * 0.3


def test_run_without_a_microphone_explains_itself() -> None:
    """`hearthd run` is the live daemon: with no audio device it says so, and what still works."""
    proc = hearthd("run", env={"HEARTHD__AUDIO__INPUT_DEVICE": '"no such microphone"'})
    assert proc.returncode == 1
    assert "audio-no-device" in proc.stderr and "--headless" in proc.stderr and "Traceback" not in proc.stderr


def test_ask_cancel_all_alarms_asks_and_no_changes_nothing(tmp_path: Path) -> None:
    """Issue 5's acceptance line, through the CLI: a question, a "no", and no call."""
    import json as _json
    import os as _os
    import subprocess as _sp
    import sys as _sys

    env = {**_os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}  # alarms of its own, not the user's
    proc = _sp.run([_sys.executable, "-m", "hearthd", "ask", "cancel all my alarms", "--then", "no", "--json"],
                   capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    events = [_json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
    kinds = [e["type"] for e in events]
    assert "confirm_request" in kinds and "tool_call" not in kinds
    assert [e["answer"] for e in events if e["type"] == "confirm_answer"] == ["no"]
    assert [e["text"] for e in events if e["type"] == "reply"] == ["Cancel all your alarms? Please say yes or no.",
                                                                     "Okay, I didn't do it."]


def test_invalid_utf8_in_argv_is_a_clear_usage_error() -> None:
    """`hearthd ask $'\\xff'` was `hearthd: internal: 'utf-8' codec can't encode character '\\udcff'`."""
    import os

    proc = subprocess.run([os.fsencode(sys.executable), b"-m", b"hearthd", b"ask", b"caf\xc3\xa9 \xff lights"],
                          capture_output=True, timeout=60, env={**os.environ, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"})
    err = proc.stderr.decode("utf-8")
    assert proc.returncode == 2, err
    assert "hearthd ask: text is not valid UTF-8 (byte 0xff at offset 6)" in err
    assert "surrogate" not in err and "Traceback" not in err and "internal" not in err
    then = subprocess.run([os.fsencode(sys.executable), b"-m", b"hearthd", b"ask", b"cancel all my alarms",
                           b"--then", b"\xfe"], capture_output=True, timeout=60,
                          env={**os.environ, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"})
    assert then.returncode == 2 and b"--then is not valid UTF-8 (byte 0xfe" in then.stderr


def test_a_text_over_agent_max_text_chars_is_refused_before_anything_reads_it() -> None:
    """~2,500 characters crashed llama_decode; past agent.max_text_chars the turn ends at once, said and audited."""
    import json

    proc = hearthd("ask", "turn on the kitchen light and " * 100, "--json",
                   env={"HEARTHD__MQTT__ENABLED": "false", "HEARTHD__DBUS__ENABLED": "false"})
    assert proc.returncode == 1, proc.stderr
    events = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
    errors = [e for e in events if e["type"] == "error"]
    assert [e["code"] for e in errors] == ["text-too-long"] and "at most 2000" in errors[0]["message"]
    assert [e["text"] for e in events if e["type"] == "reply"] == [
        "That was more than I can take in at once. Please say it more briefly."]
    assert not any(e["type"] == "timing" and e.get("stage") == "load_agent" for e in events)
