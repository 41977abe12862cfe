"""The agent model on an inference server: llama-cpp-python's OpenAI-compatible `llama_cpp.server` (extras `server`),
on another machine of the house or this one (`agent.engine = "server"`, `agent.uri = "http://HOST:PORT"`).

hearthd's own decision method is unchanged: the same prompts, token for token, as the model run here (the chat
template and the vocabulary are read here from the same GGUF, vocabulary only, no weights: `agent.model` or
`agent.model_path`, checked once against the server's tokenizer); the tool's name chosen by the model's token
probabilities, its arguments decoded under the same GBNF grammar, then validated and confirmed here. Only the
weights run there, and the server keeps the evaluated prompt prefix itself (its prefix match, and `--cache` for the
relevance check's prompt beside the agent's).

What goes over the wire, per model turn: the prompt as text (the catalogue prefix included, ~15 KB: the server
re-tokenises it and evaluates only what its cache lacks), and back a few hundred bytes per request; a turn makes
3-6 requests (the name's probabilities, the relevance check, the arguments). Probabilities come from the
completion's `logprobs` (the server's raw scores: a `logit_bias` steers which token is sampled, never the scores
reported). A server that is down or slower than the turn's time ends the turn with a clear error
(`agent-server-unavailable`, spoken), and the next turn tries it again; the fast path never needs it.
"""

from __future__ import annotations

import copy
import json
import math
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..config import AgentConfig
from .model import Completion, ModelError, ModelFailed, OutOfTime, Prompts

PREFIX_TIMEOUT_S = 900.0  # evaluating a catalogue prefix the first time (a warm-up, not a turn: no turn waits on it)
TOP_LOGPROBS = 100  # the most likely next tokens the server lists: every tool name's first token is among them
PROBE = "<|im_start|>user\nturn on the kitchen light, बत्ती जलाओ, включи свет<|im_end|>\n"


class ServerUnavailable(ModelError):
    """The inference server does not answer, or not in time."""

    code = "agent-server-unavailable"
    phrase_key = "unavailable.agent"


class NextToken:
    """The log-probabilities of the token after a prompt, as the server lists them (the TOP_LOGPROBS most likely,
    by their text), indexed like the model run here: by token id, one or several (an id not listed: -inf)."""

    def __init__(self, top: dict[str, float], text_of: Any, greedy_stop: bool) -> None:
        self._top = top
        self._text_of = text_of
        self._greedy_stop = greedy_stop  # the most likely token ended the turn (listed by no text)

    def _one(self, token: int) -> float:
        text, control = self._text_of(token)
        if control:
            # a control token has no text in the server's list: an end of turn that was the most likely token is
            # known to be at least as likely as any other
            return 0.0 if self._greedy_stop else self._top.get("", -math.inf)
        return self._top.get(text, -math.inf)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, (int, np.integer)):
            return self._one(int(index))
        return np.asarray([self._one(int(t)) for t in index], dtype=np.float64)


class ServerModel(Prompts):
    """ChatModel's interface, the weights on an inference server (see the module's docstring)."""

    def __init__(self, path: Path, cfg: AgentConfig, uri: str, check_uri: str = "") -> None:
        from llama_cpp import Llama

        self.cfg = cfg
        self.path = path
        self.uri = uri.rstrip("/")
        self.check_uri = check_uri.rstrip("/")
        try:
            self.llm = Llama(model_path=str(path), vocab_only=True, verbose=False)
        except (ValueError, RuntimeError) as e:
            raise ModelError(f"cannot read the vocabulary of {path}: {e}") from e
        self._read_template(path)
        self._grammars = {}
        self._last_prompt = ""  # what the server's context holds now (it keeps one prompt)
        self._checked = False
        self._texts: dict[int, tuple[str, bool]] = {}
        self._lock = threading.Lock()
        self.evaluated = 0  # prompt tokens sent (the server evaluates only what its cache lacks)
        self.restores = 0
        self.threads = 0
        self.requests = 0  # requests made, and bytes sent and received: what goes over the wire (bench/agent.py)
        self.sent = self.received = 0
        self._side: ServerModel | None = None

    # -- what ChatModel does about threads, contexts and the cache, here or there ----------------------------

    def fit_threads(self) -> int:
        return 0  # the server has its own

    def side(self, n_ctx: int) -> ServerModel:
        """The relevance check's model: the server at agent.check_uri, where one is named (a second server process
        keeps that prompt's prefix evaluated, as the side context does here), else the same server."""
        if not self.check_uri or self.check_uri == self.uri:
            return self
        if self._side is None:
            side = copy.copy(self)  # the same vocabulary and template, read once
            side.uri, side.check_uri, side._side = self.check_uri, "", None
            side._last_prompt, side._checked, side.evaluated, side.requests, side.sent, side.received = \
                "", False, 0, 0, 0, 0
            side._lock = threading.Lock()
            self._side = side
        return self._side

    @property
    def evaluated_total(self) -> int:
        return self.evaluated + (self._side.evaluated if self._side is not None else 0)

    @property
    def kept_bytes(self) -> int:
        return 0  # the server keeps its own cache

    def room(self) -> int:
        return int(self.cfg.n_ctx)

    def ensure_prefix(self, prefix: str, state_dir: Path | None) -> str:
        """Have the server's context hold `prefix` evaluated: "warm" when the last prompt sent began with it (the
        server keeps that one: a prompt in another language, or another catalogue, took its place)."""
        if self._last_prompt.startswith(prefix):
            return "warm"
        self._request({"prompt": prefix, "max_tokens": 1, "temperature": 0.0}, timeout=PREFIX_TIMEOUT_S)
        return "evaluated"

    def hold(self, tokens: list[int]) -> None:
        """Nothing to keep here: the server's prompt cache is its own."""

    def prompt_tokens(self, prefix: str, rest: str, state_dir: Path | None) -> tuple[str, list[int]]:
        status = self.ensure_prefix(prefix, state_dir)
        return status, self.prefix_tokens(prefix) + self.tokens_special(rest)

    # -- reading and writing ------------------------------------------------------------------------------------

    def _text(self, token: int) -> tuple[str, bool]:
        """A token's text as the server lists it (UTF-8, broken bytes dropped), and whether it is a control token
        (listed with no text)."""
        if token not in self._texts:
            raw = self.llm.detokenize([token], special=False)
            self._texts[token] = (raw.decode("utf-8", errors="ignore"),
                                  not raw and bool(self.llm.detokenize([token], special=True)))
        return self._texts[token]

    def logprobs_after(self, tokens: list[int]) -> NextToken:
        """The next token's log-probabilities after `tokens` (greedy one-token completion with the top list)."""
        answer = self._request({"prompt": self.detokenize(tokens), "max_tokens": 1, "temperature": 0.0,
                                "logprobs": TOP_LOGPROBS, "repeat_penalty": 1.0}, sent=len(tokens))
        choice = answer["choices"][0]
        listed = (choice.get("logprobs") or {}).get("top_logprobs") or []
        top = {str(k): float(v) for k, v in (listed[0] or {}).items()} if listed else {}
        return NextToken(top, self._text, greedy_stop=not listed and choice.get("finish_reason") == "stop")

    def complete(self, tokens: list[int], grammar: str | None = None, max_tokens: int | None = None,
                 deadline: float = float("inf"), stop: tuple[str, ...] = ()) -> Completion:
        """As ChatModel.complete: greedy at temperature 0 (no repetition penalty), under `grammar` if given."""
        limit = max_tokens or self.cfg.max_tokens
        body: dict[str, Any] = {"prompt": self.detokenize(tokens), "max_tokens": limit,
                                "temperature": max(0.0, self.cfg.temperature), "repeat_penalty": 1.0}
        if self.cfg.temperature > 0:
            body["top_k"] = 40
        if grammar:
            body["grammar"] = grammar
        if stop:
            body["stop"] = list(stop)
        answer = self._request(body, sent=len(tokens), deadline=deadline)
        choice = answer["choices"][0]
        text = str(choice.get("text") or "")
        written = self.tokens_special(text)
        used = int((answer.get("usage") or {}).get("completion_tokens") or len(written))
        stopped_at = ""
        if stop and choice.get("finish_reason") == "stop" and used > len(written):
            stopped_at = stop[0]  # the server cuts the stop string off the text; the model wrote it
            text += stopped_at
            written = self.tokens_special(text)
        return Completion(text, len(tokens), used, written, choice.get("finish_reason") == "stop", stopped_at)

    # -- the wire -----------------------------------------------------------------------------------------------

    def check_server(self) -> str:
        """That the server answers and tokenises as this model does (the same vocabulary): its model's name."""
        models = self._call("GET", "/v1/models", None, self.cfg.server_timeout_s)
        served = [str(m.get("id", "")) for m in models.get("data", [])]
        theirs = self._call("POST", "/extras/tokenize", {"input": PROBE}, self.cfg.server_timeout_s).get("tokens")
        if theirs != self.tokens_special(PROBE):
            raise ModelError(f"the server at {self.uri} runs a model with another vocabulary than {self.path.name} "
                             "(agent.model / agent.model_path must name the GGUF the server runs)")
        self._checked = True
        return ", ".join(served) or "?"

    def _request(self, body: dict[str, Any], sent: int = 0, deadline: float = float("inf"),
                 timeout: float | None = None) -> dict[str, Any]:
        """One completion: within the turn's deadline, and within `timeout` (default agent.server_timeout_s)."""
        if not self._checked:
            self.check_server()
        end = min(deadline, self.budget_state.deadline)
        self.budget_state.check()
        left = end - time.monotonic()
        limit = timeout or self.cfg.server_timeout_s
        self._last_prompt = ""  # until it answers, what the context holds is not known
        try:
            answer = self._call("POST", "/v1/completions", body, min(limit, max(0.05, left)))
        except ServerUnavailable:
            if left < limit and time.monotonic() >= end - 0.1:
                raise OutOfTime from None  # the turn's time ran out waiting, not the server's own limit
            raise
        choices = answer.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise ServerUnavailable(f"the inference server at {self.uri} answered a completion without choices")
        self.evaluated += sent
        self._last_prompt = str(body.get("prompt", ""))
        return answer

    def _call(self, method: str, path: str, body: dict[str, Any] | None, timeout: float) -> dict[str, Any]:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"}
        if self.cfg.api_key:
            headers["Authorization"] = f"Bearer {self.cfg.api_key}"
        request = urllib.request.Request(self.uri + path, data=data, method=method, headers=headers)
        with self._lock:
            self.requests += 1
            self.sent += len(data or b"")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - the configured uri
                raw = response.read(16 << 20)
                with self._lock:
                    self.received += len(raw)
                answer = json.loads(raw)
        except urllib.error.HTTPError as e:
            detail = e.read(2000).decode("utf-8", errors="replace")
            if e.code == 400 and "context" in detail.lower():
                raise ModelFailed(f"the server's context is too small for this prompt: {detail[:200]}") from e
            raise ServerUnavailable(f"the inference server at {self.uri} answered {e.code}: {detail[:200]}") from e
        except (urllib.error.URLError, OSError, TimeoutError) as e:
            reason = getattr(e, "reason", e)
            raise ServerUnavailable(f"the inference server at {self.uri} does not answer ({reason})") from e
        except ValueError as e:
            raise ServerUnavailable(f"the inference server at {self.uri} answered something that is not JSON") from e
        if not isinstance(answer, dict):
            raise ServerUnavailable(f"the inference server at {self.uri} answered {type(answer).__name__}")
        return answer


def server_uri_problem(uri: str) -> str:
    """What is wrong with an `agent.uri` ("" when nothing): http://HOST:PORT (or https), no path beyond "/"."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(uri)
        port = parts.port
    except ValueError as e:
        return f"not a URL ({e})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "expected http://HOST:PORT (an OpenAI-compatible inference server, e.g. llama_cpp.server)"
    if port is None:
        return "the server's port is needed: http://HOST:PORT"
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        return "expected the server's root, http://HOST:PORT, without a path"
    return ""


__all__: Sequence[str] = ["NextToken", "ServerModel", "ServerUnavailable", "server_uri_problem"]
