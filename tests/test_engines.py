"""The engine registries (issue 30.1): an engine is its module and one registration. A speech-to-text engine that
this test registers (and nothing else: no config, components or doctor edit) is accepted by the config, builds the
daemon's speech to text, hears a turn through the pipeline, and is checked by `hearthd doctor`; a name no engine
registered is refused with the names that are."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hearthd import engines
from hearthd.audio.stt import Transcript
from hearthd.config import ConfigError, load_config
from hearthd.doctor import Finding, check_stages
from hearthd.events import EventType, Trace


class Dictated:
    """Speech to text whose transcripts were typed in beforehand, one per utterance, in order (an engine that
    cannot exist here: what matters is that the daemon builds and uses it through the registry)."""

    def __init__(self, texts: list[str], lang: str) -> None:
        self.texts, self.lang = list(texts), lang
        self.heard: list[float] = []

    def transcribe(self, audio: np.ndarray, language: str | None = None, fallback: str | None = None) -> Transcript:
        self.heard.append(len(audio) / 16000)
        return Transcript(self.texts.pop(0), language or self.lang, 1.0, "forced" if language else "detected")


@pytest.fixture
def dictated() -> Iterator[list[Dictated]]:
    built: list[Dictated] = []

    def build(components: Any) -> Dictated:
        built.append(Dictated(["wake me up at 6:40 please"], components.cfg.general.language))
        return built[-1]

    def check(cfg: Any, store: Any, memo: dict[str, Any]) -> list[Finding]:
        return [Finding("models", "stt: dictated", True, "typed in beforehand")]

    engines.register(engines.Engine("stt", "dictated", build, "transcripts typed in beforehand", check=check))
    yield built
    engines.unregister("stt", "dictated")


def _config(tmp_path: Path, text: str) -> Any:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return load_config(path, environ={})


async def test_a_registered_stt_engine_is_configured_built_heard_and_checked(dictated: list[Dictated],
                                                                           tmp_path: Path) -> None:
    from hearthd.assets import AssetStore
    from hearthd.daemon.components import Components
    from hearthd.daemon.pipeline import Pipeline

    cfg = _config(tmp_path, '[stt]\nengine = "dictated"\n[mqtt]\nenabled = false\n')
    assert "dictated" in engines.names("stt")
    assert engines.selected(cfg, "stt").describe() == "stt: dictated — transcripts typed in beforehand"

    components = Components(cfg)
    trace = Trace()
    result = await Pipeline(components, trace).run_utterance(np.zeros(24000, dtype=np.int16), conversation="dictated")
    assert dictated and dictated[0].heard == [1.5]  # the daemon's speech to text is the registered engine
    calls = [e.payload() for e in trace.of_type(EventType.TOOL_CALL)]
    assert [(c["name"], c["arguments"].get("time")) for c in calls] == [("set_alarm", "06:40")], result
    for alarm in components.alarms.pending():
        components.alarms.remove(alarm)

    found = check_stages(cfg, AssetStore(tmp_path / "store"))
    assert any(f.name == "stt: dictated" and f.ok for f in found)
    assert not [f for f in found if f.name.startswith("stt: whisper")]  # the engine not chosen is not checked


def test_an_engine_nobody_registered_is_refused_with_the_ones_that_are(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as e:
        _config(tmp_path, '[stt]\nengine = "whisper-large-in-the-cloud"\n')
    assert e.value.key == "stt.engine" and "'whisper'" in str(e.value) and "'wyoming'" in str(e.value)
    with pytest.raises(ConfigError, match="needs its uri") as e:
        _config(tmp_path, '[wake]\nengine = "wyoming"\n')
    assert e.value.key == "wake.uri"
    for stage in engines.STAGES:  # every stage has its engines, and the default config names registered ones
        assert engines.names(stage)
        assert engines.selected(_config(tmp_path, ""), stage).stage == stage


def test_an_engine_is_registered_once() -> None:
    with pytest.raises(ValueError, match="registered twice"):
        engines.register(engines.Engine("stt", "whisper", lambda c: None, "another whisper"))
    with pytest.raises(ValueError, match="no stage"):
        engines.register(engines.Engine("ears", "x", lambda c: None, "?"))


class Beeps:
    """A voice that says each word as a beep (an engine that cannot exist here: its audio is real)."""

    def __init__(self, pitch: float) -> None:
        self.pitch = pitch

    def synthesize(self, text: str) -> Any:
        from hearthd.audio.tts import Speech

        t = np.arange(int(0.1 * 16000)) / 16000
        beep = (8000 * np.sin(2 * np.pi * self.pitch * t)).astype(np.int16)
        return Speech(np.concatenate([beep] * len(text.split())), 16000)


def test_a_registered_voice_engine_is_configured_chosen_and_spoken(tmp_path: Path) -> None:
    """A voice engine is its module and one `register_voice_engine`: the config takes `beeps:<pitch>`, refuses a
    name the engine refuses, the voice bank speaks with it, and a Wyoming client sees the voice by its name."""
    from hearthd.audio import tts
    from hearthd.daemon.components import voice_bank

    engine = tts.VoiceEngine(
        "beeps", "beeps, one a word",
        lambda cfg, store, piper_path: tts.Engine(lambda name, lang: Beeps(float(name)), lambda name: "",
                                                  label="beeps, one a word"),
        name_problem=lambda name: "" if name.isdigit() else f"a pitch in Hz, got {name!r}")
    tts.register_voice_engine(engine)
    try:
        cfg = _config(tmp_path, '[tts.voices]\nen = "beeps:440"\n')
        with pytest.raises(ConfigError, match="a pitch in Hz") as e:
            _config(tmp_path, '[tts.voices]\nen = "beeps:loud"\n')
        assert e.value.key == "tts.voices.en"
        bank = voice_bank(cfg, None)  # type: ignore[arg-type]
        assert bank.choice("en").spec == "beeps:440" and "beeps, one a word" in bank.choice("en").why
        speech = bank.synthesize("turn it off", "en")
        assert speech.rate == 16000 and len(speech.audio) == 3 * 1600
    finally:
        tts.VOICE_ENGINES.pop("beeps", None)
    with pytest.raises(ConfigError, match="'beeps:<voice>'|expected one of"):
        _config(tmp_path, '[tts.voices]\nen = "beeps:440"\n')
