"""The agent: turns one utterance into a validated tool call, or an abstention, never a guess passed on."""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ..errors import HearthdError
from ..locale import DEFAULT_LANGUAGE, system_prompt
from ..numbers import digits_for_times
from ..tools.registry import SchemaError, ToolRegistry, UnknownTool
from .dialect import dialect_named, typed_arguments
from .grammar import NO_TOOL, arguments_grammars, no_tool_schema
from .grounding import missing_arguments, read_arguments, ungrounded_arguments
from .model import AgentModel, OutOfTime, RequestTooLong
from .parsing import ToolCall, ToolCallParseError, parse_tool_calls, strip_thinking
from .relevance import SIDE_CONTEXT_TOKENS, RelevanceCheck
from .split import split_requests


@dataclass
class Decision:
    """What to do about an utterance: run calls, or abstain (with the reason, for the trace)."""

    kind: Literal["call", "abstain", "clarify"]
    calls: list[ToolCall] = field(default_factory=list)
    reason: str = ""
    source: str = "model"
    raw: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    name_probs: dict[str, float] = field(default_factory=dict)
    relevance: float | None = None  # P(the chosen tool does what was asked), when the check ran
    say: str = ""  # phrase key of the reply when it is not the default one for the kind
    say_values: dict[str, Any] = field(default_factory=dict)  # that phrase's placeholders ("part": what was left)
    missing: str = ""  # clarify: the required argument to ask for (calls[0] is the call waiting for it)
    # clarify: the calls of the request's other parts ("turn off the lights and lock the door": the lights), done with
    # the answer, or not at all
    held: list[ToolCall] = field(default_factory=list)
    part: str = ""  # clarify with `held`: the words of the part that asks (the answer is read with them)
    evaluated: int = 0  # tokens the model evaluated for this turn (prompt, name choice, arguments, checks)
    prefix: str = ""  # how the catalogue prefix was made ready: warm, loaded or evaluated
    kept_bytes: int = 0  # the states the model keeps for later turns, after this one (AgentModel.kept_bytes)
    thinking: str = ""  # what the model thought before its call (agent.thinking on)
    thinking_tokens: int = 0
    tokens: list[int] = field(default_factory=list, repr=False, compare=False)  # the call after the prefill
    every: bool = False  # a template's group that means all of it ("it's dark in here"), never narrowed to one
    confirm: bool = False  # a weak reading (the tolerant tier): held until the user says yes, even when harmless
    among: list[str] = field(default_factory=list)  # the tools of the domain the tiers point at, for the model
    # with `among`: the tolerant tier's own reading, asked as a question if the model finds nothing ("Did you mean:
    # lock all the doors?" rather than "Sorry, I can't help with that")
    fallback: Decision | None = field(default=None, repr=False, compare=False)
    # the call is what being told not to do something asks for ("don't wake me up tomorrow": that day's alarm
    # cancelled): the words of the other side ("wake") are the ones negated, not a sign of the wrong tool
    told_not: bool = False


class AgentError(HearthdError):
    """Deciding what to do failed in a way the agent does not handle itself (a library's RuntimeError, a KeyError
    from a template): the pipeline's agent stage wraps it in this, and the turn ends with an apology."""

    code = "agent-failed"


class TurnTooLong(HearthdError):
    """The model's time budget for this turn ran out."""

    code = "agent-turn-too-long"
    phrase_key = "agent.too_slow"


# When the request this turn answers arrived (time.monotonic()), where the asker waited in line for earlier turns (a
# D-Bus, MQTT or Wyoming request): the turn's budget runs from there, so every caller is answered within
# agent.max_turn_s of asking, not of its turn in the line. None: from when the turn began.
asked_at: contextvars.ContextVar[float | None] = contextvars.ContextVar("hearthd_asked_at", default=None)


@contextlib.contextmanager
def _no_gate() -> Iterator[float | None]:
    yield None


class Agent:
    """Asks the model for a call under a grammar derived from the tools, then validates what comes back."""

    @classmethod
    def configured(cls, model: AgentModel, registry: ToolRegistry, cfg: Any, **extra: Any) -> Agent:
        """The agent as `cfg` (an AgentConfig) sets it: the daemon, `hearthd eval` and the tests decide with the same
        bars (an eval built without the lower bar once measured a stricter agent than the daemon runs)."""
        return cls(model, registry, min_tool_probability=cfg.min_tool_probability, min_relevance=cfg.min_relevance,
                   min_relevance_grounded=cfg.min_relevance_grounded, thinking=cfg.thinking_budget, **extra)

    def __init__(self, model: AgentModel, registry: ToolRegistry, state_dir: Path | None = None,
                 min_tool_probability: float = 0.0, min_relevance: float = 0.0, max_calls: int = 3,
                 max_turn_s: float = 0.0, thinking: int = 0,
                 gate: Callable[[], AbstractContextManager[float | None]] | None = None,
                 min_relevance_grounded: float | None = None) -> None:
        self.model = model
        self.state_dir = state_dir
        self.registry = registry
        self.dialect = dialect_named(model.capabilities.dialect)  # the call syntax the model was trained on
        self._grammars = arguments_grammars(registry, self.dialect)
        self._offered: tuple[str, ...] = ()
        self._schemas: list[dict[str, Any]] = []
        self._sequences: dict[str, list[int]] = {}
        self._prefixes: dict[tuple[str, tuple[str, ...], bool], str] = {}
        self.min_tool_probability = min_tool_probability
        self.min_relevance = min_relevance
        # The lower bar for a call whose required arguments code reads in the user's words (a time said, a duration,
        # a device's name): that evidence and P(yes) together, not P(yes) alone. None: the same bar for every call.
        self.min_relevance_grounded = min_relevance if min_relevance_grounded is None else min_relevance_grounded
        self.max_calls = max_calls
        self.max_turn_s = max_turn_s  # 0: no limit
        self.thinking = thinking if model.capabilities.thinking else 0  # a model without the mode cannot think
        self._deadline = float("inf")
        self._relevance = RelevanceCheck(model) if min_relevance > 0 else None
        self.prefix_status = ""
        # The daemon prepares the prefixes in the background at start-up and after reloads (`prepare`), so there a
        # turn's budget covers whatever is not ready yet. Anywhere else (one-shot `hearthd ask`, eval) the prefix is
        # a one-time preparation, made ready before a turn's clock starts: a first use on a slow machine is slow
        # once, never "took too long".
        self.prepared_in_background = False
        # `gate()`: held for a whole turn (the daemon's one-inference-at-a-time gate); it yields when the turn's
        # budget started (the end of speech, when the live loop holds the turn), or None: from now.
        self.gate = gate or _no_gate
        self._busy = threading.Condition()  # one user of the llama context at a time: a turn or the warm-up
        self._turns_waiting = 0
        self._holder = ""  # who has the llama context: "", "turn" or "warm-up"
        self._stop = threading.Event()
        self._here = threading.local()  # `cancelled`: decisions made in this thread are speculative (`speculating`)
        self._holding: threading.Event | None = None  # the speculative decision that has the llama context
        self._among: frozenset[str] = frozenset()  # this turn's domain (decide's `among`); empty: every tool

    @property
    def _tools(self) -> list[dict[str, Any]]:
        """The catalogue in the prompt: the tools offered now (it changes when devices come and go, and each
        distinct catalogue is one cached prefix)."""
        offered = self.registry.offered()
        names = tuple(t.name for t in offered)
        if names != self._offered:
            # no_tool first: the catalogue's shared head stays one cacheable prefix whatever tools follow it
            self._offered, self._schemas = names, [no_tool_schema()] + [t.openai_schema() for t in offered]
            self._sequences = {}
        return self._schemas

    def messages(self, text: str, lang: str, now: datetime) -> list[dict[str, Any]]:
        # The clock is left out for now: beside the user's words a 0.5B model copies it into arguments,
        # and in the system prompt it would break prefix reuse. Alarm times are absolute HH:MM.
        return [
            {"role": "system", "content": system_prompt(lang)},
            {"role": "user", "content": text},
        ]

    def _render(self, text: str, lang: str, now: datetime | None = None) -> str:
        return self.model.render(self.messages(text, lang, now or datetime.now().astimezone()), self._tools,
                                 thinking=self.thinking > 0)

    def prefix(self, lang: str) -> str:
        """The part of every prompt in `lang` that comes before the user's words (kept per language, catalogue
        and thinking mode: every turn needs it)."""
        self._tools  # noqa: B018 — refreshes the offered names
        key = (lang, self._offered, self.thinking > 0)
        if key not in self._prefixes:
            marker = "\u0000USER\u0000"
            rendered = self._render(marker, lang)
            self._prefixes[key] = rendered[: rendered.index(marker)]
        return self._prefixes[key]

    def _name_sequences(self) -> dict[str, list[int]]:
        """Each offered name (and no_tool) as the model's tokens after the prefill, up to the end of the name."""
        self._tools  # noqa: B018 — refreshes the offered names
        if not self._sequences:
            for name in [*self._offered, NO_TOOL]:
                self._sequences[name] = [tok for piece in self.dialect.name_pieces(name)
                                         for tok in self.model.tokens_plain(piece)]
        return self._sequences

    def name_probabilities(self, tokens: list[int]) -> tuple[dict[str, float], list[int]]:
        """P(each declared name) at the first token where the names differ, renormalised over them; and the
        tokens all names share before it (the XML form's `=`, when the vocabulary has no `=name` token)."""
        seqs = self._name_sequences()
        shared = _common_prefix(list(seqs.values()))
        logprobs = self.model.logprobs_after(tokens + shared)
        firsts = {name: seq[len(shared)] for name, seq in seqs.items()}
        by_token = {tok: float(np.exp(logprobs[tok])) for tok in set(firsts.values())}
        total = sum(by_token.values()) or 1.0
        return {name: by_token[tok] / total for name, tok in firsts.items()}, shared

    def choose_tool(self, tokens: list[int], probs: dict[str, float], shared: list[int]) -> str:
        """The most likely declared tool name. The first token decides among tools; where several names share
        it (calculate_area, calculate_volume) the names are followed token by token, as greedy decoding would."""
        seqs = {n: s for n, s in self._name_sequences().items() if n != NO_TOOL and n in probs}
        best = max(seqs, key=lambda n: probs[n])
        depth = len(shared)
        chosen = [*shared, seqs[best][depth]]
        group = [n for n in seqs if seqs[n][depth] == chosen[-1]]
        while len(group) > 1:
            depth = len(chosen)
            done = [n for n in group if len(seqs[n]) <= depth]
            if done:
                return done[0]
            logprobs = self.model.logprobs_after(tokens + chosen)
            top = max(group, key=lambda n, lp=logprobs, d=depth: float(lp[seqs[n][d]]))  # type: ignore[misc]
            chosen.append(seqs[top][depth])
            group = [n for n in group if seqs[n][depth] == chosen[-1]]
        return group[0]

    def relevant(self, name: str, text: str) -> float | None:
        """P(tool `name` does what `text` asks), or None when the check is off."""
        if self._relevance is None:
            return None
        return self._relevance.probability(self.registry.get(name), text, self.state_dir)

    def decide(self, text: str, lang: str, now: datetime | None = None, only: str | None = None,
               among: list[str] | None = None) -> Decision:
        """Blocking: run the model once and check its answer (call from an executor thread). With `only`, the
        tool is already known (a clarification being answered) and just its arguments are decoded.

        `max_turn_s` covers the whole turn from when it began (the end of speech, when the gate says so): waiting
        for the model, the catalogue prefix if it is not ready yet, the relevance check, thinking and decoding.
        Evaluation is cut mid-prompt when it passes. With `among`, the tool is chosen among those (and no_tool): the
        domain the templates pointed at; the prompt, and so its cached prefix, still shows the whole catalogue."""
        self._among = frozenset(among or ())
        began, evaluated = time.monotonic(), self.model.evaluated_total
        cancelled: threading.Event | None = getattr(self._here, "cancelled", None)
        if cancelled is not None and cancelled.is_set():
            return Decision("abstain", reason="stale: the speaker went on", say="agent.too_slow")
        prepared: dict[str, str] = {}
        if not self.prepared_in_background:
            try:
                self._check_room(digits_for_times(text, lang), lang, now)  # refused before anything is prepared
            except RequestTooLong as e:
                return Decision("abstain", reason=str(e), say="agent.too_much", seconds=time.monotonic() - began)
            prepared = self.prepare([lang], checks=False)
        started = time.monotonic()
        with self.gate() as since, self._model_for_turn(cancelled):
            budget_from = min(started, since) if since is not None else started
            if prepared.get(lang) in ("evaluated", "loaded"):
                budget_from = started  # this turn just prepared its prefix: the budget starts after that
            elif (asked := asked_at.get()) is not None:
                budget_from = min(budget_from, asked)
            self._deadline = budget_from + self.max_turn_s if self.max_turn_s > 0 else float("inf")
            if asked_at.get() is not None and time.monotonic() >= self._deadline:  # its budget spent in the line
                return Decision("abstain", reason=f"waited {time.monotonic() - budget_from:.1f} s for other turns, "
                                f"over the {self.max_turn_s:g} s budget", say="error.busy",
                                seconds=time.monotonic() - began)
            self._thought: tuple[str, int] = ("", 0)
            self.prefix_status = ""
            text = digits_for_times(text, lang)  # "साढ़े छह" → "6:30": small models read digits far better
            try:
                with self.model.budget(self._deadline):
                    if cancelled is not None and cancelled.is_set():  # cancelled before the deadline was set
                        raise OutOfTime
                    self._in_time()
                    self.model.fit_threads()
                    if only:
                        decision = self._arguments(only, text, lang, {}, lambda: self._turn(text, lang, now))
                    else:
                        decision = self._decide(text, lang, now)
            except (TurnTooLong, OutOfTime):
                decision = Decision("abstain", reason="stale: the speaker went on" if cancelled is not None and
                                    cancelled.is_set() else f"over the {self.max_turn_s:g} s budget",
                                    say="agent.too_slow")
            except RequestTooLong as e:
                decision = Decision("abstain", reason=str(e), say="agent.too_much")
            decision.seconds = time.monotonic() - began  # what the user waited for, the preparation too
            decision.evaluated = self.model.evaluated_total - evaluated
            decision.kept_bytes = getattr(self.model, "kept_bytes", 0)
            decision.thinking, decision.thinking_tokens = self._thought
            # The prefix's state for this turn: made ready just now by the preparation, or as the turn found it.
            just_made = prepared.get(lang, "")
            decision.prefix = just_made if just_made in ("evaluated", "loaded") else self.prefix_status
            return decision

    @contextlib.contextmanager
    def speculating(self, cancelled: threading.Event) -> Iterator[None]:
        """Decisions made in this thread meanwhile are speculative (made in the pause, while the speaker may go on):
        `cancel(cancelled)` ends one at its next token or chunk, and frees the model at once."""
        self._here.cancelled = cancelled
        try:
            yield
        finally:
            self._here.cancelled = None

    def cancel(self, cancelled: threading.Event) -> None:
        """The speculative decision `cancelled` marks is stale: it stops between tokens (or never starts)."""
        cancelled.set()
        with self._busy:
            if self._holder == "speculation" and self._holding is cancelled:
                self.model.cut()

    @contextlib.contextmanager
    def _model_for_turn(self, cancelled: threading.Event | None = None) -> Iterator[None]:
        """The llama context for this turn: a warm-up in progress is cut at its next chunk (what it evaluated stays
        cached) and resumes after the turn."""
        with self._busy:
            self._turns_waiting += 1
            try:
                while self._holder:
                    if self._holder == "warm-up":
                        self.model.cut()
                    self._busy.wait()
            finally:
                self._turns_waiting -= 1
            self._holder, self._holding = ("speculation", cancelled) if cancelled is not None else ("turn", None)
        try:
            yield
        finally:
            with self._busy:
                self._holder, self._holding = "", None
                self._busy.notify_all()

    def stop_preparing(self) -> None:
        """End a warm-up in progress at its next chunk (shutting down); what it evaluated stays consistent."""
        with self._busy:
            self._stop.set()
            if self._holder == "warm-up":
                self.model.cut()

    def load(self) -> None:
        """Open every context a turn may use (the relevance check's side context too), without evaluating."""
        if self._relevance is not None:
            self.model.side(SIDE_CONTEXT_TOKENS)

    def prepare(self, langs: list[str], stop: threading.Event | None = None, checks: bool = True) -> dict[str, str]:
        """Make the catalogue prefix of each language ready (evaluated, or restored from its saved state) and the
        relevance check's examples, so a first turn pays for neither; then, unless `checks` is false (a turn that
        prepares for itself), the check's state for each tool (its signature after the examples). The last language
        stays in the cache (put the default one last). Yields to any turn, then goes on; returns the status of the
        check's prefix and of each language's."""
        done: dict[str, str] = {}
        steps: list[tuple[str, Callable[[], str]]] = []
        if self._relevance is not None:
            side, check = self.model.side(SIDE_CONTEXT_TOKENS), self._relevance
            steps.append(("relevance", lambda: side.ensure_prefix(check._prefix(side), self.state_dir)))
        for lang in langs:
            steps.append((lang, lambda lang=lang: self.model.ensure_prefix(self.prefix(lang), self.state_dir)))  # type: ignore[misc]
        if self._relevance is not None and checks:  # each tool's check, after the prefixes a first turn needs more
            for tool in self.registry.offered():
                steps.append(("", lambda tool=tool: check.prepare(tool, self.state_dir)))  # type: ignore[misc]
        for name, step in steps:
            while not self._stop.is_set() and not (stop is not None and stop.is_set()):
                with self._busy:
                    while self._holder or self._turns_waiting:  # a turn goes first
                        self._busy.wait()
                    self._holder = "warm-up"
                    self.model.budget_state.deadline = float("inf")  # under the lock: a turn's cut() comes after
                try:
                    status = step()
                    if name:
                        done[name] = status
                    break
                except OutOfTime:
                    continue  # cut by a turn: once it is done, go on from what is cached
                finally:
                    with self._busy:
                        self.model.budget_state.deadline = float("inf")
                        self._holder = ""
                        self._busy.notify_all()
        return done

    def _check_room(self, text: str, lang: str, now: datetime | None) -> tuple[str, str]:
        """(rendered prompt, its catalogue prefix) when the request fits the context with room for the answer;
        RequestTooLong when it does not (tokenising only: nothing is evaluated)."""
        rendered, prefix = self._render(text, lang, now), self.prefix(lang)
        if not rendered.startswith(prefix):  # a template that renders the system turn differently per user turn
            prefix = ""
        # What the model may still write after the request: thinking, the call, a second call, the checks.
        headroom = self.thinking + self.max_calls * (self.model.cfg.max_tokens + 32)
        words = len(self.model.tokens_special(rendered[len(prefix):]))
        room = self.model.room() - headroom - len(self.model.prefix_tokens(prefix))
        if words > room:
            raise RequestTooLong(f"the request is {words} tokens; the context has room for {max(room, 0)}")
        if self._relevance is not None:
            self._relevance.check_room(text)
        return rendered, prefix

    def _turn(self, text: str, lang: str, now: datetime | None) -> list[int]:
        """The turn's tokens, ending with the prefill: the catalogue prefix made ready (cached, loaded or
        evaluated), the user's words, and with agent.thinking on, what the model thought."""
        rendered, prefix = self._check_room(text, lang, now)
        # The prefix is ready when the daemon warmed it up; if not, evaluating it is part of this turn's budget
        # (cut mid-prompt when the budget ends: the next turn, or the warm-up, goes on from what was evaluated).
        self.prefix_status, tokens = self.model.prompt_tokens(prefix, rendered[len(prefix):], self.state_dir)
        if self.thinking:
            tokens = self._think(tokens)
        return tokens + self.model.tokens_special(self.dialect.prefill)

    def _think(self, tokens: list[int]) -> list[int]:
        """Up to `thinking` tokens of free text after `<think>`; then `</think>` (forced at the budget)."""
        self._in_time()
        thought = self.model.complete(tokens, max_tokens=self.thinking, deadline=self._deadline, stop=("</think>",))
        self._in_time()
        self._thought = (thought.text.removesuffix("</think>").strip(), thought.completion_tokens)
        close = "\n\n" if thought.stopped_at else ("</think>\n\n" if thought.text.endswith("\n") else "\n</think>\n\n")
        return tokens + thought.tokens + self.model.tokens_special(close)

    def _decide(self, text: str, lang: str, now: datetime | None) -> Decision:
        names = [t.name for t in self.registry.offered()]
        relevance: float | None = None
        if len(names) == 1:
            # One candidate: ask the cheap question first, and skip the catalogue prompt when the answer is no.
            relevance = self.relevant(names[0], text)
            if relevance is not None and relevance < self.min_relevance:
                return Decision("abstain", reason=f"not something {names[0]} does (p={relevance:.2f})",
                                relevance=relevance)
        tokens = self._turn(text, lang, now)
        decision = self._call(tokens, text, lang, relevance)
        several = len(split_requests(text, lang)) > 1  # only then is a second call worth a forward pass
        context = tokens + decision.tokens
        while several and decision.kind == "call" and len(decision.calls) < self.max_calls:
            # "turn off the light and set an alarm for seven": after a call the model may open another one. The
            # context only grows (the call as it was decoded, then the next prefill): nothing is evaluated again.
            after = context + self.model.tokens_special(self.dialect.tail + "\n")
            if not self._another_call(after):
                break
            following = after + self.model.tokens_special(self.dialect.prefill)
            more = self._call(following, text, lang, None)
            if more.kind != "call" or more.calls[0] in decision.calls:
                break  # an extra call that is unusable or a repeat is dropped; the calls before it stand
            decision.calls += more.calls
            decision.raw += "\n" + more.raw
            context = following + more.tokens
        return decision

    def _another_call(self, tokens: list[int]) -> bool:
        call, end = self.model.special_token("<tool_call>"), self.model.special_token("<|im_end|>")
        if call < 0 or end < 0:
            return False
        logprobs = self.model.logprobs_after(tokens)
        return bool(logprobs[call] > logprobs[end])

    def _in_time(self) -> None:
        if time.monotonic() > self._deadline:
            raise TurnTooLong

    def _call(self, tokens: list[int], text: str, lang: str, relevance: float | None) -> Decision:
        """One call after `tokens` (which end with the prefill): the tool by probability, checked for relevance,
        then its arguments."""
        probs, shared = self.name_probabilities(tokens)
        self._in_time()
        if self._among and self._among & set(probs):
            kept = {n: p for n, p in probs.items() if n in self._among or n == NO_TOOL}
            total = sum(kept.values()) or 1.0
            probs = {n: p / total for n, p in kept.items()}
        best = max(probs, key=lambda n: probs[n])
        if best == NO_TOOL or probs[best] < self.min_tool_probability:
            # Decided at the first token: no need to decode a reason nobody will hear.
            why = "no tool fits" if best == NO_TOOL else f"unsure which tool ({best} p={probs[best]:.2f})"
            return Decision("abstain", reason=why, name_probs=probs, relevance=relevance)
        best = self.choose_tool(tokens, probs, shared)
        on_evidence = False  # between the two bars: acted on only when the arguments are read from the words
        if relevance is None:
            relevance = self.relevant(best, text)
            if relevance is not None and relevance < self.min_relevance:
                # the lower bar needs evidence beside P(yes): a time, a duration or a name read in the words, or the
                # tolerant tier's reading pointing at this domain (two readings of the words agreeing)
                within = best in self._among
                on_evidence = relevance >= self.min_relevance_grounded and (within or bool(self._grounded_keys(best)))
                if not on_evidence:
                    return Decision("abstain", reason=f"not something {best} does (p={relevance:.2f})",
                                    name_probs=probs, relevance=relevance)
        decision = self._arguments(best, text, lang, probs, lambda: tokens)
        decision.relevance = relevance
        if on_evidence and best not in self._among and not (decision.kind == "call" and all(
                self._grounded_keys(c.name) <= set(c.arguments) for c in decision.calls)):
            return Decision("abstain", reason=f"not something {best} does (p={relevance:.2f}, nothing said it needs)",
                            name_probs=probs, relevance=relevance)
        return decision

    def _grounded_keys(self, name: str) -> set[str]:
        """The required arguments of `name` that the checks find in the user's words or refuse (a time, a duration,
        a name): a call that passed with all of them is evidence of its own."""
        params = self.registry.get(name).model_parameters
        props = params.get("properties", {})
        return {k for k in params.get("required", [])
                if isinstance(props.get(k), dict) and props[k].get("x-ground") in ("time", "duration", "name")}

    def _arguments(self, name: str, text: str, lang: str, probs: dict[str, float],
                   tokens: Callable[[], list[int]]) -> Decision:
        """The tool is decided: ask for a required argument the user has not said, or decode the values."""
        tool = self.registry.get(name)
        missing = missing_arguments(tool, text, lang)
        if missing:
            return Decision("clarify", calls=[ToolCall(name, {})], missing=missing[0], name_probs=probs,
                            reason=f"{name}: {missing[0]} not said")
        head = self.dialect.head(name)
        read = read_arguments(tool, text, lang)
        props = tool.model_parameters.get("properties", {})
        required = set(tool.model_parameters.get("required", []))
        if read and required <= set(read) and all(k in read or props[k].get("x-ground") in ("name", "words", "date")
                                                   for k in props):
            # Every argument the user gave is a time, a duration or a name read by code; the named options they did
            # not say are left out. Nothing to decode.
            written = self.dialect.arguments_text(read)
            decision = self.check(self.dialect.call_text(name, written), text, lang)
            decision.tokens = self.model.tokens_special(head + written)
        else:
            # Feed the name and the syntax around the arguments as prompt and decode only the argument values,
            # under that one tool's schema.
            self._in_time()
            head_tokens = self.model.tokens_special(head)
            completion = self.model.complete(tokens() + head_tokens, grammar=self._grammars[name],
                                             deadline=self._deadline)
            self._in_time()
            if not completion.finished:
                return Decision("abstain", reason=f"{name}: arguments longer than {self.model.cfg.max_tokens} tokens",
                                say="agent.too_long", name_probs=probs)
            decision = self.check(self.dialect.call_text(name, completion.text), text, lang)
            if decision.kind == "abstain" and decision.missing:
                # the tool is what was asked and only what to act on was not said: asked for, as the templates ask
                # "turn on the" (the model's own guess at a name is never acted on)
                return Decision("clarify", calls=[ToolCall(name, {})], missing=decision.missing, name_probs=probs,
                                reason=f"{name}: {decision.missing} not said")
            decision.prompt_tokens = completion.prompt_tokens
            decision.completion_tokens = completion.completion_tokens
            decision.tokens = head_tokens + completion.tokens
        decision.name_probs = probs
        return decision

    def check(self, raw: str, utterance: str = "", lang: str = DEFAULT_LANGUAGE) -> Decision:
        """Parse and validate model output; anything unusable becomes an abstention with its reason."""
        try:
            calls = parse_tool_calls(raw)
        except ToolCallParseError as e:
            return Decision("abstain", reason=f"malformed call: {e}", raw=raw)
        if not calls:
            answer = strip_thinking(raw)
            return Decision("abstain", reason=f"no tool fits (model said: {answer[:120]!r})", raw=raw)
        for call in calls:
            if call.name == NO_TOOL:
                return Decision("abstain", reason=str(call.arguments.get("reason", ""))[:120], raw=raw)
            if call.textual and call.name in self.registry:
                call.arguments = typed_arguments(call.arguments, self.registry.get(call.name).model_parameters)
            try:
                call.arguments = self.registry.validate(call.name, call.arguments)
            except (UnknownTool, SchemaError) as e:
                return Decision("abstain", reason=f"invalid call {call.name}: {e}", raw=raw)
            if utterance:
                tool = self.registry.get(call.name)
                bad = ungrounded_arguments(tool, call.arguments, utterance, lang)
                required = set(tool.model_parameters.get("required", []))
                if any(key in required for key in bad):
                    # a name the user did not say ("can you open the": the model wrote some device): `missing` says
                    # which, for the turn to ask (Agent._arguments)
                    props = tool.model_parameters.get("properties", {})
                    names = [k for k in bad if k in required and props.get(k, {}).get("x-ground") == "name"]
                    return Decision("abstain", reason=f"{call.name}: {', '.join(bad)} not said by the user",
                                    raw=raw, missing=names[0] if names and len(calls) == 1 else "")
                # an optional detail the user never gave ("every day" added to "set an alarm for 7") is dropped
                call.arguments = {k: v for k, v in call.arguments.items() if k not in bad}
        return Decision("call", calls=calls, raw=raw)


def _common_prefix(seqs: list[list[int]]) -> list[int]:
    """The tokens every sequence starts with, leaving at least one token of the shortest."""
    if not seqs:
        return []
    out: list[int] = []
    for column in zip(*seqs, strict=False):
        if len(set(column)) != 1 or len(out) + 1 >= min(len(s) for s in seqs):
            break
        out.append(column[0])
    return out
