"""The local tool-calling model: a llama.cpp session that renders prompts with the GGUF's own chat template.

What the model is, is read from the GGUF, never assumed (`Capabilities`): a hybrid or recurrent model
(Qwen3.5's `qwen35`: linear-attention layers with a recurrent state beside full attention) cannot drop the
end of its cache, so `ChatModel` never relies on a partial rewind. Every `seq_rm` is checked; when it is
refused, the context is restored from an in-memory snapshot of a prefix (the catalogue prompt) and only what
follows is evaluated. Decoding is hearthd's own loop, so a completion only ever extends the cache.

A turn's deadline (`budget`) is checked between chunks of prompt tokens, so a long prompt on a busy machine
is cut mid-evaluation: what was evaluated stays in the cache as exactly the tokens it holds (a later turn
extends it), and a prefix counts as ready (snapshot, saved state) only once it was evaluated whole. The threads
follow the free cores turn by turn when `agent.threads` is 0.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import logging
import os
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import llama_cpp
import numpy as np

from ..config import AgentConfig, xdg_dir
from ..cores import threads_for
from ..errors import HearthdError


class _NoRedirect:
    """Stands in for llama-cpp-python's `suppress_stdout_stderr`, which silences a model load by pointing the
    *process's* fds 1 and 2 at /dev/null: in a daemon with threads that hid every trace line and log written
    meanwhile, and two loads at once (a warm-up beside a turn) left them there for good. llama.cpp's chatter goes
    through its log callback instead, which `_quiet_llama` keeps silent; nothing touches the fds."""

    def __init__(self, disable: bool = True) -> None:
        pass

    def __enter__(self) -> _NoRedirect:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def _quiet_llama() -> None:
    import logging

    from llama_cpp import _internals, _logger, _utils, llama, llama_chat_format

    for module in (_utils, _internals, llama, llama_chat_format):
        if hasattr(module, "suppress_stdout_stderr"):
            module.suppress_stdout_stderr = _NoRedirect  # type: ignore[attr-defined]
    # The callback prints what reaches this logger's level; Llama(verbose=False) would set it to ERROR, which lets
    # the loader's "control-looking token" lines through. A load that fails reaches hearthd as an exception.
    silent = logging.CRITICAL + 1

    def set_verbose(verbose: bool) -> None:
        _logger.logger.setLevel(logging.DEBUG if verbose else silent)

    llama.set_verbose = set_verbose
    _logger.logger.setLevel(silent)


_quiet_llama()
log = logging.getLogger(__name__)


def default_weights_dir() -> Path:
    """Where the 8-bit copies of the agent models are kept (hearthd.agent.weights)."""
    return xdg_dir("XDG_CACHE_HOME", ".cache") / "hearthd" / "weights"

# Prompt tokens evaluated between two looks at the deadline. Each chunk reads all the weights again, so small chunks
# cost throughput: measured on the default model, 2 shared cores, 512 prompt tokens (medians of 8, interleaved):
# one batch 2.79 s, chunks of 128 2.84 s (+2%), 64 3.17 s (+14%), 32 3.70 s (+33%). So chunks are sized by time:
# the first of each evaluation is EVAL_CHUNK_MIN tokens (it measures the rate now), the next ones as many tokens
# as half the time left allows at that rate (a turn far from its deadline evaluates in full batches, at no cost),
# at most EVAL_CHUNK_S of work when there is no deadline (a warm-up a turn may cut), never fewer than
# EVAL_CHUNK_MIN: a cut comes at most one small chunk late.
EVAL_CHUNK_MIN = 32
EVAL_CHUNK_MAX = 512
EVAL_CHUNK_S = 1.0


class ModelError(HearthdError):
    """The model file cannot be loaded or has no usable chat template."""

    code = "agent-model-invalid"


class RequestTooLong(HearthdError):
    """The request does not fit the model's context beside its prompt and the answer: the user is asked to say less."""

    code = "agent-request-too-long"
    phrase_key = "agent.too_much"


class OutOfTime(HearthdError):
    """The turn's deadline passed while the model was evaluating or writing; the cache holds what was done."""

    code = "agent-out-of-time"
    phrase_key = "agent.too_slow"


@dataclass
class Budget:
    """The deadline (on `clock`) of the turn in progress; a context and its side context share one."""

    deadline: float = float("inf")
    clock: Callable[[], float] = time.monotonic

    def check(self) -> None:
        if self.clock() > self.deadline:
            raise OutOfTime


class ModelFailed(ModelError):
    """llama.cpp could not evaluate a batch (e.g. no room left in the context); the context was cleared."""

    code = "agent-model-failed"


@dataclass(frozen=True)
class Capabilities:
    """What a GGUF is, read from its metadata and llama.cpp: architecture, memory kind, call dialect, thinking."""

    architecture: str
    hybrid: bool  # attention + recurrent layers (qwen35): the cache cannot be rewound part-way
    recurrent: bool
    dialect: Literal["json", "xml"]  # <tool_call>{"name": …} (Qwen2.5/Qwen3) or <function=…><parameter=…> (Qwen3.5)
    thinking: bool  # the template has a thinking mode (enable_thinking / <think>)
    tools: bool  # the template renders a `tools` list

    @property
    def rewinds(self) -> bool:
        """True when the cache can drop its tail (a plain transformer); False: snapshots only."""
        return not (self.hybrid or self.recurrent)

    @classmethod
    def read(cls, llm: Any, template: str) -> Capabilities:
        model = llm.model
        return cls(
            architecture=str(llm.metadata.get("general.architecture", "")),
            hybrid=bool(llama_cpp.llama_model_is_hybrid(model)),
            recurrent=bool(llama_cpp.llama_model_is_recurrent(model)),
            dialect="xml" if "<function=" in template else "json",
            thinking="enable_thinking" in template or "<think>" in template,
            tools="tools" in template,
        )

    def summary(self) -> str:
        memory = "hybrid (recurrent + attention)" if self.hybrid else "recurrent" if self.recurrent else "attention"
        return (f"{self.architecture or '?'}, {memory} cache, {self.dialect.upper()} tool calls, "
                f"thinking {'available' if self.thinking else 'not available'}")


def read_capabilities(path: Path) -> Capabilities:
    """The capabilities of a GGUF without loading its weights or making a context (vocabulary and metadata only)."""
    import logging

    from llama_cpp import _logger

    params = llama_cpp.llama_model_default_params()
    params.vocab_only = True
    level = _logger.logger.level
    _logger.logger.setLevel(logging.CRITICAL + 1)  # llama.cpp's loader chatter; a failure is our ModelError
    try:
        model = llama_cpp.llama_model_load_from_file(str(path).encode(), params)
    finally:
        _logger.logger.setLevel(level)
    if not model:
        raise ModelError(f"cannot read {path}: not a GGUF llama.cpp can load")
    try:
        template = _meta(model, "tokenizer.chat_template")
        return Capabilities(
            architecture=_meta(model, "general.architecture"),
            hybrid=bool(llama_cpp.llama_model_is_hybrid(model)),
            recurrent=bool(llama_cpp.llama_model_is_recurrent(model)),
            dialect="xml" if "<function=" in template else "json",
            thinking="enable_thinking" in template or "<think>" in template,
            tools="tools" in template,
        )
    finally:
        llama_cpp.llama_model_free(model)


def _meta(model: Any, key: str) -> str:
    size = 4096
    while True:
        buf = ctypes.create_string_buffer(size)
        n = llama_cpp.llama_model_meta_val_str(model, key.encode(), buf, size)
        if n < 0:
            return ""
        if n < size:
            return buf.value.decode("utf-8", errors="replace")
        size = n + 1


@dataclass
class Completion:
    """Text the model produced, its tokens, and whether it ended by itself (end of turn or grammar complete)."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    tokens: list[int] = field(default_factory=list)
    finished: bool = True
    stopped_at: str = ""  # the stop string that ended it, if any


class AgentModel(Protocol):
    """What the agent asks of its model, wherever the weights run: here (ChatModel) or on an inference server
    (hearthd.agent.server.ServerModel). Every prompt is written in the model's own tokens."""

    cfg: AgentConfig
    capabilities: Capabilities
    budget_state: Budget

    def render(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
               thinking: bool = False) -> str: ...
    def tokens_plain(self, text: str) -> list[int]: ...
    def tokens_special(self, text: str) -> list[int]: ...
    def special_token(self, text: str) -> int: ...
    def prefix_tokens(self, prefix: str) -> list[int]: ...
    def prompt_tokens(self, prefix: str, rest: str, state_dir: Path | None) -> tuple[str, list[int]]: ...
    def ensure_prefix(self, prefix: str, state_dir: Path | None) -> str: ...
    def hold(self, tokens: list[int]) -> None: ...
    def logprobs_after(self, tokens: list[int]) -> Any: ...  # indexed by token id (one or several): log P
    def complete(self, tokens: list[int], grammar: str | None = None, max_tokens: int | None = None,
                 deadline: float = float("inf"), stop: tuple[str, ...] = ()) -> Completion: ...
    def budget(self, deadline: float) -> contextlib.AbstractContextManager[None]: ...
    def cut(self) -> None: ...
    def fit_threads(self) -> int: ...
    def side(self, n_ctx: int) -> AgentModel: ...
    def room(self) -> int: ...
    @property
    def evaluated_total(self) -> int: ...
    @property
    def kept_bytes(self) -> int: ...


class Prompts:
    """Writing prompts in a model's own tokens: its chat template (Jinja, `tools` aware) and its vocabulary, from a
    loaded `Llama` (`self.llm`, weights or vocabulary only), and the turn's deadline. Shared by the model run here
    (ChatModel) and the one run on an inference server (hearthd.agent.server.ServerModel), so both write every prompt
    token for token alike."""

    llm: Any
    cfg: AgentConfig
    _formatter: Any
    _grammars: dict[str, Any]
    SNAPSHOTS = 4  # prefix states kept in memory (one per language and catalogue in use)
    HELD = 32  # states kept by hold() (the relevance check's, one per tool: ~12 KB a token, ~4 MB each)

    def _read_template(self, path: Path) -> None:
        """The chat template and what it can do (capabilities), from the loaded model's metadata."""
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        template = self.llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise ModelError(f"{path} has no chat template in its metadata; hearthd needs a Qwen-family GGUF")
        self.capabilities = Capabilities.read(self.llm, template)
        self.supports_tools = self.capabilities.tools
        eos = self._token_text(self.llm.token_eos())
        bos = self._token_text(self.llm.token_bos())
        self._formatter = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)
        self._prefix_tokens: dict[str, list[int]] = {}
        self.budget_state = Budget()

    @contextlib.contextmanager
    def budget(self, deadline: float) -> Iterator[None]:
        """Evaluation and decoding here (and in the side context) raise OutOfTime past `deadline` (monotonic)."""
        self.budget_state.deadline = deadline
        try:
            yield
        finally:
            self.budget_state.deadline = float("inf")

    def cut(self) -> None:
        """End what runs now at its next chunk (OutOfTime), e.g. a warm-up when a turn needs the model."""
        self.budget_state.deadline = float("-inf")

    def _token_text(self, token: int) -> str:
        if token < 0:
            return ""
        return self.llm.detokenize([token], special=True).decode("utf-8", errors="replace")

    def render(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
               thinking: bool = False) -> str:
        """The prompt text up to the assistant's turn, with the template's thinking mode on or off."""
        return str(self._formatter(messages=messages, tools=tools, enable_thinking=thinking).prompt)

    def grammar(self, text: str) -> Any:
        from llama_cpp import LlamaGrammar

        if text not in self._grammars:
            self._grammars[text] = LlamaGrammar.from_string(text, verbose=False)
        return self._grammars[text]

    def tokens(self, text: str) -> list[int]:
        """Token ids of a whole prompt (BOS where the model wants one, special tokens parsed)."""
        return list(self.llm.tokenize(text.encode("utf-8"), add_bos=True, special=True))

    def prefix_tokens(self, prefix: str) -> list[int]:
        """`tokens(prefix)` for a prompt prefix, kept: every turn needs its catalogue prefix's tokens."""
        if prefix not in self._prefix_tokens:
            if len(self._prefix_tokens) >= 4 * self.SNAPSHOTS:
                self._prefix_tokens.clear()
            self._prefix_tokens[prefix] = self.tokens(prefix)
        return list(self._prefix_tokens[prefix])

    def tokens_special(self, text: str) -> list[int]:
        """Token ids of a fragment that continues a prompt (no BOS; `<tool_call>` and the like parsed)."""
        return list(self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def special_token(self, text: str) -> int:
        """The id of a special token such as `<tool_call>` or `<|im_end|>` (-1 when the vocabulary lacks it)."""
        ids = self.tokens_special(text)
        return ids[0] if len(ids) == 1 else -1

    def tokens_plain(self, text: str) -> list[int]:
        """Token ids of a text fragment (no BOS, no special tokens)."""
        return list(self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def detokenize(self, tokens: list[int]) -> str:
        return self.llm.detokenize(tokens, special=True).decode("utf-8", errors="replace")


class ChatModel(Prompts):
    """llama-cpp-python with the model's own Jinja chat template (Qwen2.5, Qwen3, Qwen3.5: `tools` aware)."""

    def __init__(self, path: Path, cfg: AgentConfig, weights_dir: Path | None = None) -> None:
        """`path`: the GGUF; run from its 8-bit copy in `weights_dir` (default: the cache's) where agent.weights
        says so (hearthd.agent.weights)."""
        from .weights import for_prompts

        self.cfg = cfg
        self.source = path  # the file named; `path` is the one loaded
        self._weights_dir = weights_dir if weights_dir is not None else default_weights_dir()
        threads = threads_for(cfg.threads)
        loaded = for_prompts(path, cfg.weights, self._weights_dir, threads)
        try:
            self.llm = self._load(loaded, threads)
        except ModelError:
            if loaded == path:
                raise
            # the copy cannot be read (a disk that failed under it): made again by the next start, the file named now
            log.warning("the 8-bit copy %s did not load; the model runs from %s", loaded, path)
            with contextlib.suppress(OSError):
                loaded.unlink()
            loaded = path
            self.llm = self._load(path, threads)
        self.path = loaded
        self._read_template(path)
        self._grammars: dict[str, Any] = {}
        self._side: ChatModel | None = None
        self._snapshots: OrderedDict[tuple[int, ...], bytes] = OrderedDict()
        self._held: OrderedDict[tuple[int, ...], bytes] = OrderedDict()  # states kept by hold(), apart
        self._logits_live = False  # the context's last logits belong to its last cached token
        self.evaluated = 0  # tokens decoded through this context, for the trace and bench/agent.py
        self.restores = 0  # snapshot restores (each one instead of re-evaluating the prefix)
        self.threads = threads
        self._rate: float | None = None  # prompt tokens per second in the last chunk

    def _load(self, path: Path, threads: int) -> Any:
        from llama_cpp import Llama

        try:
            return Llama(
                model_path=str(path),
                n_ctx=self.cfg.n_ctx,
                n_threads=threads,
                n_threads_batch=threads,  # llama-cpp-python's default is every core, busy or not
                n_batch=512,
                verbose=False,
            )
        except (ValueError, RuntimeError) as e:
            raise ModelError(f"cannot load {path}: {e}") from e

    def fit_threads(self) -> int:
        """With agent.threads = 0, as many threads as cores are free now (this context and the side one)."""
        if self.cfg.threads <= 0:
            n = threads_for(0)
            for model in (self, self._side):
                if model is not None and model.threads != n:
                    llama_cpp.llama_set_n_threads(model.llm._ctx.ctx, n, n)
                    model.threads = n
        return self.threads

    def side(self, n_ctx: int) -> ChatModel:
        """A second context on the same weights (mmap-shared), for checks that must not evict the main
        context's cached prompt prefix."""
        if self._side is None:
            from dataclasses import replace

            # the very file this context loaded (the copy, or the original it fell back to): nothing read again
            self._side = ChatModel(self.path, replace(self.cfg, n_ctx=n_ctx, weights="as-is"), self._weights_dir)
            self._side.budget_state = self.budget_state  # one deadline for the turn, whichever context runs
        return self._side

    @property
    def evaluated_total(self) -> int:
        """Tokens evaluated by this context and its side context."""
        return self.evaluated + (self._side.evaluated if self._side is not None else 0)

    @property
    def kept_bytes(self) -> int:
        """Memory the states kept for later turns take (the catalogue snapshots and held states, the side context's
        too): bounded by SNAPSHOTS and HELD, filled by the languages and tools that turns use."""
        own = sum(map(len, self._snapshots.values())) + sum(map(len, self._held.values()))
        return own + (self._side.kept_bytes if self._side is not None else 0)

    # -- the cache ---------------------------------------------------------------------------------------

    def prompt_tokens(self, prefix: str, rest: str, state_dir: Path | None) -> tuple[str, list[int]]:
        """`prefix` (system prompt + catalogue) made ready in the cache, and the tokens of prefix + rest. The
        prefix is tokenised on its own so its snapshot is always a prefix of the turn's tokens."""
        status = self.ensure_prefix(prefix, state_dir)
        return status, self.prefix_tokens(prefix) + self.tokens_special(rest)

    def ensure_prefix(self, prefix: str, state_dir: Path | None) -> str:
        """Have `prefix` ready for a turn: cached already ("warm"), loaded from a saved state ("loaded"), or
        evaluated once and saved ("evaluated"), so a turn pays only for the user's words and the answer."""
        tokens = self.prefix_tokens(prefix)
        key = tuple(tokens)
        if self.capabilities.rewinds:
            if self._cached_prefix(tokens) >= len(tokens):
                return "warm"
            if key in self._snapshots and self._restore(key):
                return "warm"  # another language's turn came between: its catalogue is restored, not evaluated again
        elif key in self._snapshots:
            self._snapshots.move_to_end(key)
            return "warm"
        file = None
        if state_dir is not None:
            digest = hashlib.sha256(
                f"{self.path.resolve()}|{self.path.stat().st_size}|{self.path.stat().st_mtime_ns}|"
                f"{self.cfg.n_ctx}|{llama_cpp.__version__}|{prefix}".encode()
            ).hexdigest()[:24]
            file = state_dir / f"{digest}.kv"
            if file.is_file() and self._load_state(file, tokens):
                self._remember(tokens)
                return "loaded"
        self._evaluate(tokens)
        self._remember(tokens)
        if file is not None:
            self._save_state(file)
        return "evaluated"

    def _cached_prefix(self, tokens: list[int]) -> int:
        """How many leading `tokens` the cache holds now."""
        llm = self.llm
        n = min(llm.n_tokens, len(tokens))
        if n == 0:
            return 0
        cached = np.asarray(llm.input_ids[:n])
        diff = np.nonzero(cached != np.asarray(tokens[:n], dtype=cached.dtype))[0]
        return int(diff[0]) if len(diff) else n

    def _remember(self, tokens: list[int]) -> None:
        """Keep the state of exactly `tokens` (the cache holds them now): a model that cannot rewind needs it for
        every turn; one that can still loses the prefix to a turn in another language (each language's catalogue is
        its own prefix, about 12 KB a token for the default model: some 30 MB each)."""
        if self.llm.n_tokens != len(tokens):
            return
        self._snapshots[tuple(tokens)] = self._state_bytes()
        self._snapshots.move_to_end(tuple(tokens))
        while len(self._snapshots) > self.SNAPSHOTS:
            self._snapshots.popitem(last=False)

    def hold(self, tokens: list[int]) -> None:
        """Keep the state of exactly `tokens` (evaluated now unless kept already), apart from the catalogue
        snapshots and up to HELD of them: the relevance check keeps one per tool (its examples, then the tool's
        signature), so a check of another tool than the last one evaluates the request's words only."""
        key = tuple(tokens)
        if key in self._held:
            self._held.move_to_end(key)
            return
        self._evaluate(tokens)
        if self.llm.n_tokens == len(tokens):
            self._held[key] = self._state_bytes()
            while len(self._held) > self.HELD:
                self._held.popitem(last=False)

    def room(self) -> int:
        """Tokens the context holds at most."""
        return int(self.llm.n_ctx())

    def _decode(self, tokens: list[int]) -> None:
        """Extend the cache by `tokens`, EVAL_CHUNK at a time with the deadline checked before each chunk: when it
        passes, OutOfTime, and the cache holds exactly the tokens evaluated so far (with live logits)."""
        if not tokens:
            return
        if self.llm.n_tokens + len(tokens) > self.room():
            raise ModelFailed(f"{self.llm.n_tokens + len(tokens)} tokens do not fit the context of {self.room()}")
        i = 0
        while i < len(tokens):
            self.budget_state.check()
            # the first chunk measures how fast this machine is now: a rate from an idle minute ago would size a
            # chunk that runs far past the deadline once the cores are busy
            chunk = tokens[i : i + (self._chunk_size() if i else EVAL_CHUNK_MIN)]
            began = time.perf_counter()
            try:
                self.llm.eval(chunk)
            except RuntimeError as e:  # "llama_decode returned N": what the cache holds is no longer known
                self._logits_live = False
                self.llm.reset()
                self.llm._ctx.kv_cache_clear()
                raise ModelFailed(f"the model could not evaluate {len(tokens)} tokens: {e}") from e
            if len(chunk) >= EVAL_CHUNK_MIN:
                self._rate = len(chunk) / max(time.perf_counter() - began, 1e-6)
            self.evaluated += len(chunk)
            self._logits_live = True
            i += len(chunk)

    def _chunk_size(self) -> int:
        """Tokens to evaluate before the next look at the deadline (see EVAL_CHUNK_MIN): half of what the time left
        allows at the last chunk's rate, so a slower next chunk still ends in time."""
        left = self.budget_state.deadline - self.budget_state.clock()
        if self._rate is None:
            return EVAL_CHUNK_MIN
        horizon = left / 2 if left != float("inf") else EVAL_CHUNK_S
        return int(min(EVAL_CHUNK_MAX, max(EVAL_CHUNK_MIN, self._rate * horizon)))

    def _evaluate(self, tokens: list[int]) -> None:
        """Bring the cache to exactly `tokens` with live logits for the last one, evaluating as little as it can:
        restore a kept state that holds more of `tokens` than the cache does; else extend what is cached; drop a tail
        where the memory allows it; else restore the longest snapshot that `tokens` extend; else start from empty."""
        llm = self.llm
        common = self._cached_prefix(tokens)
        keep = min(common, len(tokens) - 1)  # at least one token is evaluated so logits are live
        kept = [key for key in (*self._held, *self._snapshots)
                if keep < len(key) < len(tokens) and tuple(tokens[: len(key)]) == key]
        for key in sorted(kept, key=len, reverse=True):  # a state that holds more than the cache does
            if self._restore(key):
                self._decode(tokens[len(key):])
                return
        if common == llm.n_tokens and (common < len(tokens) or self._logits_live):
            self._decode(tokens[common:])  # nothing to drop: extend (or nothing at all)
            return
        if keep > 0 and llm._ctx.kv_cache_seq_rm(-1, keep, -1):
            llm.n_tokens = keep
            self._decode(tokens[keep:])
            return
        for key in sorted((*self._held, *self._snapshots), key=len, reverse=True):
            if len(key) < len(tokens) and tuple(tokens[: len(key)]) == key and self._restore(key):
                self._decode(tokens[len(key):])
                return
        llm.reset()  # n_tokens = 0, and a recurrent state is cleared
        llm._ctx.kv_cache_clear()
        self._decode(tokens)

    def _state_bytes(self) -> bytes:
        ctx = self.llm._ctx.ctx
        size = llama_cpp.llama_state_get_size(ctx)
        buf = (ctypes.c_uint8 * size)()
        n = llama_cpp.llama_state_get_data(ctx, buf, size)
        return bytes(buf)[:n]

    def _set_state(self, blob: bytes) -> bool:
        buf = (ctypes.c_uint8 * len(blob)).from_buffer_copy(blob)
        return bool(llama_cpp.llama_state_set_data(self.llm._ctx.ctx, buf, len(blob)) == len(blob))

    def _restore(self, key: tuple[int, ...]) -> bool:
        kept = self._held if key in self._held else self._snapshots
        if not self._set_state(kept[key]):
            return False
        self.llm.input_ids[: len(key)] = key
        self.llm.n_tokens = len(key)
        self._logits_live = False  # logits are not part of what a restore brings back
        self.restores += 1
        kept.move_to_end(key)
        return True

    def _save_state(self, file: Path) -> None:
        llm = self.llm
        blob = self._state_bytes()
        ids = np.asarray(llm.input_ids[: llm.n_tokens], dtype=np.int32)
        try:
            file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp = file.with_suffix(f".tmp-{os.getpid()}")
            with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as f:  # the prompt: 0600
                f.write(len(ids).to_bytes(4, "little"))
                f.write(ids.tobytes())
                f.write(blob)
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
            if ids.tolist() != tokens or not self._set_state(blob):
                return False
        except (OSError, ValueError):
            return False
        llm.input_ids[:count] = ids
        llm.n_tokens = count
        self._logits_live = False
        return True

    # -- reading and writing -------------------------------------------------------------------------------

    def logprobs_after(self, tokens: list[int]) -> np.ndarray:
        """Log-probabilities of the token after a token sequence."""
        llm = self.llm
        self._evaluate(tokens)
        logits = np.ctypeslib.as_array(llm._ctx.get_logits_ith(-1), shape=(llm.n_vocab(),)).astype(np.float64)
        logits -= logits.max()
        return logits - np.log(np.exp(logits).sum())

    def complete(self, tokens: list[int], grammar: str | None = None, max_tokens: int | None = None,
                 deadline: float = float("inf"), stop: tuple[str, ...] = ()) -> Completion:
        """Decode after `tokens` (greedy at temperature 0), under `grammar` if given, until the end of the turn,
        the grammar's end, a `stop` string, `max_tokens` or `deadline` (time.monotonic()). The cache is only ever
        extended: it holds `tokens` and every token written except the final end-of-turn token."""
        from llama_cpp._internals import LlamaSampler

        limit = max_tokens or self.cfg.max_tokens
        self._evaluate(tokens)
        sampler = LlamaSampler()
        if grammar:
            sampler.add_grammar(self.llm._model, self.grammar(grammar))
        if self.cfg.temperature <= 0:
            sampler.add_greedy()
        else:
            sampler.add_top_k(40)
            sampler.add_temp(self.cfg.temperature)
            sampler.add_dist(int(time.time_ns() & 0xFFFFFFFF))
        vocab = self.llm._model.vocab
        out: list[int] = []
        text = b""
        finished, stopped_at = False, ""
        try:
            while len(out) < limit and time.monotonic() <= deadline:
                token = sampler.sample(self.llm._ctx, -1)
                if llama_cpp.llama_vocab_is_eog(vocab, token):
                    finished = True
                    break
                out.append(token)
                text += self.llm.detokenize([token], special=True)
                self._decode([token])
                decoded = text.decode("utf-8", errors="ignore")
                stopped_at = next((s for s in stop if decoded.endswith(s)), "")
                if stopped_at:
                    finished = True
                    break
        finally:
            sampler.close()
        return Completion(text.decode("utf-8", errors="replace"), len(tokens), len(out), out, finished, stopped_at)
