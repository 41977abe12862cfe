"""The local tool-calling model: a llama.cpp session that renders prompts with the GGUF's own chat template."""

from __future__ import annotations

import ctypes
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import llama_cpp
import numpy as np

from ..config import AgentConfig


class ModelError(Exception):
    """The model file cannot be loaded or has no usable chat template."""

    code = "agent-model-invalid"


@dataclass
class Completion:
    """Raw text the model produced, with token counts."""

    text: str
    prompt_tokens: int
    completion_tokens: int


class ChatModel:
    """llama-cpp-python with the model's own Jinja chat template (Qwen2.5, Qwen3, Qwen3.5: `tools` aware)."""

    def __init__(self, path: Path, cfg: AgentConfig) -> None:
        from llama_cpp import Llama
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self.cfg = cfg
        self.path = path
        try:
            self.llm = Llama(
                model_path=str(path),
                n_ctx=cfg.n_ctx,
                n_threads=cfg.threads or (os.cpu_count() or 2),
                n_batch=512,
                verbose=False,
            )
        except (ValueError, RuntimeError) as e:
            raise ModelError(f"cannot load {path}: {e}") from e
        template = self.llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise ModelError(f"{path} has no chat template in its metadata; hearthd needs a Qwen-family GGUF")
        self.supports_tools = "tools" in template
        eos = self._token_text(self.llm.token_eos())
        bos = self._token_text(self.llm.token_bos())
        self._formatter = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)
        self.stop = ["<|im_end|>", "<|endoftext|>"] + ([eos] if eos else [])
        self._grammars: dict[str, Any] = {}
        self._side: ChatModel | None = None

    def side(self, n_ctx: int) -> ChatModel:
        """A second context on the same weights (mmap-shared), for checks that must not evict the main
        context's cached prompt prefix."""
        if self._side is None:
            from dataclasses import replace

            self._side = ChatModel(self.path, replace(self.cfg, n_ctx=n_ctx))
        return self._side

    def _token_text(self, token: int) -> str:
        if token < 0:
            return ""
        return self.llm.detokenize([token], special=True).decode("utf-8", errors="replace")

    def render(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
        """The prompt text up to the assistant's turn; Qwen3 thinking is switched off."""
        return self._formatter(messages=messages, tools=tools, enable_thinking=False).prompt  # type: ignore[arg-type]

    def grammar(self, text: str) -> Any:
        from llama_cpp import LlamaGrammar

        if text not in self._grammars:
            self._grammars[text] = LlamaGrammar.from_string(text, verbose=False)
        return self._grammars[text]

    def tokens(self, text: str) -> list[int]:
        """Token ids the way create_completion tokenizes a prompt (special tokens parsed)."""
        return list(self.llm.tokenize(text.encode("utf-8"), add_bos=True, special=True))

    def special_token(self, text: str) -> int:
        """The id of a special token such as `<tool_call>` or `<|im_end|>` (-1 when the vocabulary lacks it)."""
        ids = self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)
        return ids[0] if len(ids) == 1 else -1

    def tokens_plain(self, text: str) -> list[int]:
        """Token ids of a text fragment (no BOS, no special tokens)."""
        return list(self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def ensure_prefix(self, prefix: str, state_dir: Path | None) -> str:
        """Have `prefix` (system prompt + tool catalogue) in the KV cache: already there, loaded from a saved
        state, or evaluated once and saved, so a turn pays only for the user's words and the answer."""
        llm = self.llm
        tokens = self.tokens(prefix)
        if llm.n_tokens >= len(tokens) and llm.input_ids[: len(tokens)].tolist() == tokens:
            return "warm"
        file = None
        if state_dir is not None:
            key = hashlib.sha256(
                f"{self.path.resolve()}|{self.path.stat().st_size}|{self.path.stat().st_mtime_ns}|"
                f"{self.cfg.n_ctx}|{llama_cpp.__version__}|{prefix}".encode()
            ).hexdigest()[:24]
            file = state_dir / f"{key}.kv"
            if file.is_file() and self._load_state(file, tokens):
                return "loaded"
        self._evaluate(tokens)
        if file is not None:
            self._save_state(file)
        return "evaluated"

    def _evaluate(self, tokens: list[int]) -> None:
        """Bring the KV cache to exactly `tokens`, keeping the longest common prefix already there."""
        llm = self.llm
        cached = llm.input_ids[: llm.n_tokens].tolist()
        common = 0
        for a, b in zip(cached, tokens, strict=False):
            if a != b:
                break
            common += 1
        common = min(common, len(tokens) - 1)  # at least one token is evaluated so logits are live
        llm._ctx.kv_cache_seq_rm(-1, common, -1)
        llm.n_tokens = common
        llm.eval(tokens[common:])

    def _save_state(self, file: Path) -> None:
        llm = self.llm
        size = llama_cpp.llama_state_get_size(llm._ctx.ctx)
        buf = (ctypes.c_uint8 * size)()
        n = llama_cpp.llama_state_get_data(llm._ctx.ctx, buf, size)
        ids = np.asarray(llm.input_ids[: llm.n_tokens], dtype=np.int32)
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            tmp = file.with_suffix(f".tmp-{os.getpid()}")
            with open(tmp, "wb") as f:
                f.write(len(ids).to_bytes(4, "little"))
                f.write(ids.tobytes())
                f.write(bytes(buf)[:n])
            os.replace(tmp, file)
        except OSError:
            pass  # a cache that cannot be written only costs time

    def _load_state(self, file: Path, tokens: list[int]) -> bool:
        llm = self.llm
        try:
            data = file.read_bytes()
            count = int.from_bytes(data[:4], "little")
            ids = np.frombuffer(data[4 : 4 + 4 * count], dtype=np.int32)
            blob = data[4 + 4 * count :]
            if ids.tolist() != tokens:
                return False
            buf = (ctypes.c_uint8 * len(blob)).from_buffer_copy(blob)
            if llama_cpp.llama_state_set_data(llm._ctx.ctx, buf, len(blob)) != len(blob):
                return False
        except (OSError, ValueError):
            return False
        llm.input_ids[:count] = ids
        llm.n_tokens = count
        return True

    def next_token_logprobs(self, prompt: str) -> np.ndarray:
        """Log-probabilities of the token after `prompt`, evaluating only the part not already cached.

        The following `complete()` of the same prompt then starts sampling at once: llama-cpp-python sees the
        whole prompt in its KV cache with live logits.
        """
        return self.logprobs_after(self.tokens(prompt))

    def logprobs_after(self, tokens: list[int]) -> np.ndarray:
        """Log-probabilities of the token after a token sequence (the cached common prefix is reused)."""
        llm = self.llm
        self._evaluate(tokens)
        logits = np.ctypeslib.as_array(llm._ctx.get_logits_ith(-1), shape=(llm.n_vocab(),)).astype(np.float64)
        logits -= logits.max()
        return logits - np.log(np.exp(logits).sum())

    def complete(self, prompt: str, grammar: str | None = None, max_tokens: int | None = None,
                 deadline: float = float("inf")) -> Completion:
        """Greedy completion; llama-cpp-python keeps the KV cache of the longest common prompt prefix. Decoding
        stops at `deadline` (time.monotonic()), leaving an unfinished call that the caller refuses."""
        import time

        from llama_cpp import StoppingCriteriaList

        out = self.llm.create_completion(
            prompt,
            stopping_criteria=StoppingCriteriaList([lambda _ids, _logits: time.monotonic() > deadline]),
            max_tokens=max_tokens or self.cfg.max_tokens,
            temperature=self.cfg.temperature,
            top_k=1 if self.cfg.temperature == 0 else 40,
            stop=self.stop,
            grammar=self.grammar(grammar) if grammar else None,
        )
        usage: dict[str, int] = dict(out.get("usage") or {})  # type: ignore[union-attr, arg-type]
        text = out["choices"][0]["text"]  # type: ignore[index]
        return Completion(text, usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0))
