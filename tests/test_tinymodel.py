"""The tiny qwen35 test model: it loads as a hybrid, tokenizes like the default model, and behaves like Qwen3.5
where hearthd's agent cares (no partial rollback of the recurrent state; whole-state save and restore works)."""

from __future__ import annotations

import ctypes
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import llama_cpp
import numpy as np
import numpy.typing as npt
import pytest

from .tinymodel import HPARAMS, QWEN35_TEMPLATE, read_chat_template, write_tiny_qwen35

SENTENCE = "Okay Nabu, set an alarm for seven thirty tomorrow — и включи свет, please."


def _load(path: Path, vocab_only: bool = False) -> llama_cpp.Llama:
    # One batch thread: the tiny graphs are too small to split, and spinning OpenMP barriers on a busy 2-core
    # machine cost ~1 s per batch.
    return llama_cpp.Llama(model_path=str(path), n_ctx=2048, n_threads=1, n_threads_batch=1, verbose=False,
                           vocab_only=vocab_only)


def _last_logits(llm: llama_cpp.Llama) -> npt.NDArray[np.float32]:
    ptr = llama_cpp.llama_get_logits_ith(llm._ctx.ctx, -1)
    return np.ctypeslib.as_array(ptr, shape=(llm.n_vocab(),)).copy()


@pytest.fixture(scope="module")
def llm(qwen35_xml_model: Path) -> Iterator[llama_cpp.Llama]:
    model = _load(qwen35_xml_model)
    yield model
    model.close()


@pytest.fixture
def fresh(llm: llama_cpp.Llama) -> llama_cpp.Llama:
    llm.reset()
    return llm


def test_loads_as_hybrid_qwen35(llm: llama_cpp.Llama) -> None:
    assert llm.metadata["general.architecture"] == "qwen35"
    assert llama_cpp.llama_model_is_hybrid(llm.model)
    assert not llama_cpp.llama_model_is_recurrent(llm.model)
    assert llm.metadata["qwen35.block_count"] == str(HPARAMS.n_layer)
    assert llm.metadata["qwen35.full_attention_interval"] == "4"
    assert "<function=" in llm.metadata["tokenizer.chat_template"]


def test_tokenizes_like_the_default_model(llm: llama_cpp.Llama, default_model_gguf: Path) -> None:
    ref = llama_cpp.Llama(model_path=str(default_model_gguf), vocab_only=True, verbose=False)
    try:
        for text in (SENTENCE, "<|im_start|>user\nhi<|im_end|>\n<tool_call>"):
            data = text.encode()
            assert llm.tokenize(data, special=True) == ref.tokenize(data, special=True)
        assert llm.n_vocab() == ref.n_vocab()
        assert llm.token_eos() == ref.token_eos()
        assert llm.token_bos() == ref.token_bos()
    finally:
        ref.close()


def test_json_model_keeps_the_default_template(qwen35_json_model: Path, default_model_gguf: Path) -> None:
    tiny = _load(qwen35_json_model, vocab_only=True)
    try:
        assert tiny.metadata["tokenizer.chat_template"] == read_chat_template(default_model_gguf)
        assert tiny.metadata["general.architecture"] == "qwen35"
    finally:
        tiny.close()


def test_logits_are_finite(fresh: llama_cpp.Llama) -> None:
    tokens = fresh.tokenize(SENTENCE.encode())
    fresh.eval(tokens)
    logits = _last_logits(fresh)
    assert np.isfinite(logits).all()
    assert logits.std() > 0.1  # not degenerate: the tokens are told apart


def test_partial_memory_rollback_is_refused(fresh: llama_cpp.Llama) -> None:
    """Library fact the agent relies on: the recurrent state cannot be cut back to a prefix (n_rs_seq = 0)."""
    tokens = fresh.tokenize(SENTENCE.encode())
    fresh.eval(tokens)
    n = len(tokens)
    assert n > 2
    for p in (1, n // 2, n - 1):
        assert fresh._ctx.kv_cache_seq_rm(-1, p, -1) is False
    assert fresh._ctx.kv_cache_seq_rm(-1, n, -1) is True  # nothing after the end: nothing to undo
    assert fresh._ctx.kv_cache_seq_rm(-1, 0, -1) is True  # dropping everything always works


def test_state_save_and_restore(fresh: llama_cpp.Llama) -> None:
    ctx = fresh._ctx.ctx
    tokens = fresh.tokenize(SENTENCE.encode())
    fresh.eval(tokens)
    n_tokens = fresh.n_tokens

    size = llama_cpp.llama_state_get_size(ctx)
    buf = (ctypes.c_uint8 * size)()
    assert llama_cpp.llama_state_get_data(ctx, buf, size) == size

    nxt = fresh.tokenize(b" lights")[0]
    fresh.eval([nxt])
    expected = _last_logits(fresh)
    fresh.eval(fresh.tokenize(b" and some more words to move the state on"))

    assert llama_cpp.llama_state_set_data(ctx, buf, size) == size
    fresh.n_tokens = n_tokens
    fresh.eval([nxt])
    np.testing.assert_allclose(_last_logits(fresh), expected, rtol=0, atol=1e-5)


def test_deterministic_per_seed(tmp_path: Path, qwen35_xml_model: Path, default_model_gguf: Path) -> None:
    template = QWEN35_TEMPLATE.read_text(encoding="utf-8")
    again = write_tiny_qwen35(tmp_path / "again.gguf", default_model_gguf, template, seed=0)
    assert again.read_bytes() == qwen35_xml_model.read_bytes()
    other = write_tiny_qwen35(tmp_path / "other.gguf", default_model_gguf, template, seed=1)
    assert other.stat().st_size == again.stat().st_size
    assert other.read_bytes() != again.read_bytes()

    logits = []
    for path in (again, other):
        model = _load(path)
        try:
            model.eval(model.tokenize(SENTENCE.encode()))
            logits.append(_last_logits(model))
        finally:
            model.close()
    assert not np.allclose(logits[0], logits[1])


def test_file_is_small(qwen35_xml_model: Path) -> None:
    assert qwen35_xml_model.stat().st_size < 16 * 1024 * 1024


def test_template_renders_xml_tool_calls() -> None:
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    fmt = Jinja2ChatFormatter(QWEN35_TEMPLATE.read_text(encoding="utf-8"), eos_token="<|im_end|>",
                              bos_token="<|endoftext|>")
    tool: Any = {"type": "function", "function": {"name": "set_alarm", "parameters": {
        "type": "object", "properties": {"time": {"type": "string"}}, "required": ["time"]}}}
    messages: list[Any] = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "alarm at 7:30, and the kitchen light"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"type": "function", "function": {"name": "set_alarm", "arguments": {"time": "07:30"}}},
            {"type": "function", "function": {"name": "light", "arguments": {"room": ["kitchen"], "on": 1}}},
        ]},
        {"role": "tool", "content": "ok"},
        {"role": "tool", "content": "done"},
    ]
    prompt = fmt(messages=messages, tools=[tool], enable_thinking=False).prompt
    assert prompt.startswith("<|im_start|>system\n")
    assert "<tools>\n" + json.dumps(tool, ensure_ascii=False) + "\n</tools>" in prompt
    assert "Be brief.<|im_end|>\n<|im_start|>user\nalarm at 7:30" in prompt
    assert ("<|im_start|>assistant\n<think>\n\n</think>\n\n<tool_call>\n<function=set_alarm>\n<parameter=time>\n07:30\n"
            "</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=light>\n<parameter=room>\n[\"kitchen\"]\n"
            "</parameter>\n<parameter=on>\n1\n</parameter>\n</function>\n</tool_call><|im_end|>\n") in prompt
    assert ("<|im_start|>user\n<tool_response>\nok\n</tool_response>\n<tool_response>\ndone\n</tool_response>"
            "<|im_end|>\n") in prompt
    assert prompt.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    thinking = fmt(messages=[{"role": "user", "content": "hi"}]).prompt
    assert thinking == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n"
