"""The agent model runs from an 8-bit copy of its 4-bit weights (agent.weights = "q8_0", hearthd.agent.weights): made
once in the cache, private, reused by the next load and by the relevance check's context, deciding as the original
does; a 16-bit model, or agent.weights = "as-is", runs from its own file; and a copy that cannot be made or read
leaves the model running from the original, never without one."""

from __future__ import annotations

import dataclasses
import logging
import stat
from pathlib import Path

import numpy as np
import pytest

from hearthd.agent.model import ChatModel
from hearthd.agent.weights import describe, file_type
from hearthd.config import Config, ConfigError, load_config

pytestmark = pytest.mark.models

Q4_K_M, Q8_0, F16 = 15, 7, 1

TOOLS = [
    {"type": "function", "function": {"name": name, "description": what, "parameters": {
        "type": "object", "properties": {key: {"type": kind}}, "required": [key]}}}
    for name, what, key, kind in (
        ("set_alarm", "Set an alarm at a time of day", "time", "string"),
        ("set_timer", "Start a countdown timer", "minutes", "integer"),
        ("turn_on", "Switch a light or another device on", "name", "string"),
        ("set_volume", "Set the speaker's volume in percent", "percent", "integer"),
    )
]
REQUESTS = ["wake me at half past six", "give the pasta eleven minutes", "can you put the hall lamp on",
            "make it louder, like eighty", "поставь таймер на пять минут", "रसोई की लाइट जला दो"]


@pytest.fixture(scope="module")
def copies(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("weights")


def _first_name_token(model: ChatModel, text: str) -> np.ndarray:
    prompt = model.render([{"role": "user", "content": text}], TOOLS) + '<tool_call>\n{"name": "'
    return np.exp(model.logprobs_after(model.tokens(prompt)))


def test_a_four_bit_model_runs_from_a_private_eight_bit_copy_that_decides_alike(
        default_model_gguf: Path, base_config: Config, copies: Path) -> None:
    assert file_type(default_model_gguf) == Q4_K_M  # the shipped model: what the copy is for
    model = ChatModel(default_model_gguf, base_config.agent, copies)
    assert model.path.parent == copies and model.path != default_model_gguf
    assert file_type(model.path) == Q8_0
    assert stat.S_IMODE(model.path.stat().st_mode) == 0o600  # the cache is the user's
    assert model.source == default_model_gguf
    original = ChatModel(default_model_gguf, dataclasses.replace(base_config.agent, weights="as-is"), copies)
    assert original.path == default_model_gguf
    for text in REQUESTS:
        ours, theirs = _first_name_token(model, text), _first_name_token(original, text)
        assert int(ours.argmax()) == int(theirs.argmax()), text  # the same tool chosen
        top = np.argsort(theirs)[-4:]
        assert np.abs(ours[top] - theirs[top]).max() < 0.05, text  # and nearly as sure of each


def test_the_copy_is_made_once_and_shared_with_the_relevance_check(default_model_gguf: Path, base_config: Config,
                                                                   copies: Path) -> None:
    first = ChatModel(default_model_gguf, base_config.agent, copies)
    made = first.path.stat().st_mtime_ns
    again = ChatModel(default_model_gguf, base_config.agent, copies)
    assert again.path == first.path and again.path.stat().st_mtime_ns == made  # reused, not written again
    assert first.side(1024).path == first.path  # the check's context maps the same weights
    assert [p.name for p in copies.iterdir() if not p.name.startswith(".")] == [first.path.name]  # no partial left
    assert "8-bit copy" in describe(default_model_gguf, "q8_0", copies)


def test_a_copy_of_an_earlier_version_of_the_file_is_removed(default_model_gguf: Path, base_config: Config,
                                                             tmp_path: Path) -> None:
    source = tmp_path / "model.gguf"
    source.symlink_to(default_model_gguf)
    stale = tmp_path / "copies" / "model-0123456789abcdef-q8_0.gguf"
    stale.parent.mkdir()
    stale.write_bytes(b"an older version's copy")
    model = ChatModel(source, base_config.agent, stale.parent)
    assert model.path.parent == stale.parent and not stale.exists()


def test_sixteen_bit_weights_and_as_is_run_from_the_file_itself(qwen35_xml_model: Path, default_model_gguf: Path,
                                                                base_config: Config, tmp_path: Path) -> None:
    assert file_type(qwen35_xml_model) == F16
    assert ChatModel(qwen35_xml_model, base_config.agent, tmp_path).path == qwen35_xml_model
    as_is = ChatModel(default_model_gguf, dataclasses.replace(base_config.agent, weights="as-is"), tmp_path)
    assert as_is.path == default_model_gguf
    assert not list(tmp_path.iterdir())  # nothing written for either
    assert describe(default_model_gguf, "as-is", tmp_path) == 'runs from its own weights (agent.weights = "as-is")'
    assert "made at the first load" in describe(default_model_gguf, "q8_0", tmp_path)


def test_a_cache_that_cannot_take_the_copy_leaves_the_original(default_model_gguf: Path, base_config: Config,
                                                               tmp_path: Path, caplog: pytest.LogCaptureFixture
                                                               ) -> None:
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the cache directory would be")
    with caplog.at_level(logging.WARNING, logger="hearthd.agent.weights"):
        model = ChatModel(default_model_gguf, base_config.agent, blocked)
    assert model.path == default_model_gguf
    assert "could not write the 8-bit copy" in caplog.text
    probs = _first_name_token(model, REQUESTS[0])
    assert probs.sum() == pytest.approx(1.0, abs=1e-3)  # and it answers


def test_a_damaged_copy_is_dropped_and_the_original_loaded(default_model_gguf: Path, base_config: Config,
                                                           copies: Path, tmp_path: Path,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    whole = ChatModel(default_model_gguf, base_config.agent, copies).path
    damaged = tmp_path / whole.name
    damaged.write_bytes(whole.read_bytes()[: 1 << 20])  # cut off: a disk that failed under it
    with caplog.at_level(logging.WARNING, logger="hearthd.agent.model"):
        model = ChatModel(default_model_gguf, base_config.agent, tmp_path)
    assert model.path == default_model_gguf and not damaged.exists()
    assert "did not load" in caplog.text
    assert ChatModel(default_model_gguf, base_config.agent, tmp_path).path == damaged  # made whole by the next load
    assert file_type(damaged) == Q8_0


def test_weights_takes_only_what_it_knows(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[agent]\nweights = "q4"\n')
    with pytest.raises(ConfigError, match="agent.weights"):
        load_config(config, environ={})
    config.write_text('[agent]\nweights = "as-is"\n')
    assert load_config(config, environ={}).agent.weights == "as-is"


def test_the_target_architecture_takes_the_copy_too(qwen35_xml_model: Path, base_config: Config,
                                                   tmp_path: Path) -> None:
    """BotPsy (qwen35: recurrent and attention layers) ships at Q4_K_M too: llama.cpp's quantizer writes its 8-bit
    copy, which loads and answers as the original does (a tiny random qwen35 here, the real one cannot be had)."""
    from hearthd.agent.weights import _quantize

    copy = _quantize(qwen35_xml_model, tmp_path / "tiny-q8_0.gguf", 2)
    assert file_type(copy) == Q8_0
    ours = ChatModel(copy, dataclasses.replace(base_config.agent, n_ctx=512), tmp_path)
    theirs = ChatModel(qwen35_xml_model, dataclasses.replace(base_config.agent, n_ctx=512), tmp_path)
    tokens = ours.tokens("<|im_start|>user\nturn on the light<|im_end|>\n<|im_start|>assistant\n")
    a, b = np.exp(ours.logprobs_after(tokens)), np.exp(theirs.logprobs_after(tokens))
    assert int(a.argmax()) == int(b.argmax()) and np.abs(a - b).max() < 0.05
