"""Shared fixtures: one config without the user's files, and the real models loaded once per session."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path

import pytest

from hearthd.config import Config, load_config

from .services import Broker, session_bus

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"


@pytest.fixture(scope="session", autouse=True)
def private_state_dir(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """Audit trail and other state go to a temporary dir, never the developer's own."""
    patch = pytest.MonkeyPatch()
    patch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
    yield
    patch.undo()


@pytest.fixture(scope="session")
def base_config(tmp_path_factory: pytest.TempPathFactory) -> Config:
    """Defaults only: an empty config file, so a developer's own config cannot change test results."""
    empty = tmp_path_factory.mktemp("cfg") / "config.toml"
    empty.write_text("")
    return load_config(empty, environ={})


@pytest.fixture(scope="session")
def components(base_config: Config):  # type: ignore[no-untyped-def]
    """The real embedded models (from the model cache the set-up assembled), loaded once and shared."""
    from hearthd.daemon.components import Components

    return Components(base_config)


@pytest.fixture(scope="module")
def living_room(base_config: Config):  # type: ignore[no-untyped-def]
    """The spoken suites' home (tests/data/commands/home.yaml: lights, blinds, a thermostat, a heater, a fan) with
    the microphone in the living room; the model loads only if a test reaches it."""
    from hearthd.evaluation.evaluate import load_home
    from hearthd.evaluation.spoken_suites import Flags, SpokenRunner
    from hearthd.evaluation.voices import SpokenVoices

    cfg = copy.deepcopy(base_config)
    cfg.general.area = "Living Room"
    return SpokenRunner(cfg, load_home(ROOT / "tests" / "data" / "commands" / "home.yaml"), SpokenVoices(), Flags(),
                        seed=0).components


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    """A mosquitto of the test's own on 127.0.0.1 (a test may stop and start it again on the same port)."""
    broker = Broker(tmp_path)
    if broker.binary is None:
        pytest.skip("mosquitto is not installed")
    broker.start()
    yield broker
    broker.stop(kill=True)  # nothing listens to it any more: no clean shutdown to wait for


@pytest.fixture
def dbus_address() -> Iterator[str]:
    with session_bus() as address:
        if address is None:
            pytest.skip("dbus-daemon is not installed")
        yield address


@pytest.fixture
def dbus_config(base_config: Config, dbus_address: str, monkeypatch: pytest.MonkeyPatch) -> Config:
    """Both buses are the private daemon (the services keep their real names and buses' roles)."""
    cfg = copy.deepcopy(base_config)
    cfg.dbus.session_address = cfg.dbus.system_address = dbus_address
    cfg.agent.fast_path = True
    monkeypatch.delenv("XDG_SESSION_ID", raising=False)  # hearthd then locks the user's display session
    return cfg


@pytest.fixture(scope="session")
def default_model_gguf(base_config: Config) -> Path:
    """The default agent model's GGUF, found (or assembled) the way hearthd finds it."""
    from hearthd.daemon.components import make_store

    return make_store(base_config).resolve(base_config.agent.model)


@pytest.fixture(scope="session")
def qwen35_xml_model(tmp_path_factory: pytest.TempPathFactory, default_model_gguf: Path) -> Path:
    """A tiny random-weight qwen35 (hybrid recurrent + attention) GGUF with a Qwen3.5-style XML tool-call template."""
    from .tinymodel import QWEN35_TEMPLATE, write_tiny_qwen35

    out = tmp_path_factory.mktemp("qwen35") / "tiny-qwen35-xml.gguf"
    return write_tiny_qwen35(out, default_model_gguf, QWEN35_TEMPLATE.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def qwen35_json_model(tmp_path_factory: pytest.TempPathFactory, default_model_gguf: Path) -> Path:
    """The same tiny qwen35 with the default model's own chat template (JSON tool calls in <tool_call>)."""
    from .tinymodel import read_chat_template, write_tiny_qwen35

    out = tmp_path_factory.mktemp("qwen35") / "tiny-qwen35-json.gguf"
    return write_tiny_qwen35(out, default_model_gguf, read_chat_template(default_model_gguf))
