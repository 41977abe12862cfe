"""The relevance check: a second, cheap question to the same model before any call is decoded.

A small model asked to call tools calls one for almost anything ("what's the capital of France" becomes
`set_alarm`): given a catalogue, the first-token probability of `no_tool` stays near zero. Asked instead
the narrow question "does this function do what the request asks? yes/no", with a few worked examples,
the same model separates the two far better. The answer is read as P(yes) / (P(yes) + P(no)) from the
next-token distribution: one forward pass over the request and a one-line signature, no decoding.

The examples sit in a system message that never changes, so it is evaluated once and stays in a side
context of its own (the main context keeps the tool catalogue); a check costs the request's tokens only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..tools.registry import Tool
from .model import AgentModel, RequestTooLong

# Calibrated on the BFCL irrelevance/simple/multiple cases (see the note of issue 3); the examples are our
# own, none comes from the benchmark.
RELEVANCE_PROMPT = """\
You check whether calling a function would do what a user asked. Answer yes only when the function's \
purpose is what the request asks for and the request gives what the function needs. Answer no when the \
request asks for something else, even on the same topic, or is a question the function cannot answer.

Function: set_alarm(time): Set an alarm for a clock time.
Request: Wake me up at half past six.
Answer: yes

Function: get_weather(city, unit): Current weather for a city.
Request: What is the capital of Peru?
Answer: no

Function: circle_area(radius, unit): Area of a circle from its radius.
Request: What is the circumference of a circle with radius 4 cm?
Answer: no

Function: convert_currency(amount, source, target): Convert money between currencies.
Request: How much is 250 dollars in euros?
Answer: yes

Function: stock_price(ticker): Latest trading price of a stock.
Request: Who founded the Microsoft company?
Answer: no

Function: translate(text, target_language): Translate text into another language.
Request: Say "good morning" in Spanish.
Answer: yes

Function: bmi(weight_kg, height_m): Body mass index from weight and height.
Request: How tall is the Eiffel Tower?
Answer: no

Function: play_music(artist, song): Play a song or an artist.
Request: put on something by Queen
Answer: yes"""

SIDE_CONTEXT_TOKENS = 1536
SIGNATURE_ROOM = 900  # the worked examples (~600 tokens), a tool's signature and the answer


def signature(name: str, parameters: dict[str, Any], description: str) -> str:
    """`name(param, ...): description` — what the check shows the model of a tool."""
    props = parameters.get("properties", {}) if isinstance(parameters, dict) else {}
    return f"{name}({', '.join(props)}): {' '.join(description.split())[:400]}"


class RelevanceCheck:
    """P(the tool does what the request asks), from the model's yes/no next-token probabilities."""

    def __init__(self, model: AgentModel) -> None:
        self.model = model
        self._yes = self._firsts(["yes", "Yes", " yes", " Yes"])
        self._no = self._firsts(["no", "No", " no", " No"])

    def _firsts(self, words: list[str]) -> list[int]:
        return sorted({self.model.tokens_plain(w)[0] for w in words})

    def prompt(self, tool: Tool, text: str) -> str:
        return self.model.render(self._messages(self._question(tool, text)), None)

    @staticmethod
    def _question(tool: Tool, text: str) -> str:
        request = " ".join(text.split())
        return f"Function: {signature(tool.name, tool.model_parameters, tool.description)}\nRequest: {request}"

    @staticmethod
    def _messages(question: str) -> list[dict[str, str]]:
        return [{"role": "system", "content": RELEVANCE_PROMPT}, {"role": "user", "content": question}]

    def check_room(self, text: str) -> None:
        """RequestTooLong, before anything is evaluated, when `text` could not fit the check's context."""
        side = self.model.side(SIDE_CONTEXT_TOKENS)
        if len(side.tokens_special(text)) > side.room() - SIGNATURE_ROOM:
            raise RequestTooLong(f"the request does not fit the relevance check's context ({side.room()} tokens)")

    @staticmethod
    def _head(side: AgentModel, prefix: str, rest: str) -> list[int]:
        """The tokens of the check up to the request's words: the examples, then the tool's signature."""
        cut = rest.index("\nRequest:") + len("\nRequest:")
        return side.prefix_tokens(prefix) + side.tokens_special(rest[:cut])

    def prepare(self, tool: Tool, state_dir: Path | None = None) -> str:
        """Have the check of `tool` ready (the examples, then its signature), ahead of any turn; how the examples
        were (see ChatModel.ensure_prefix)."""
        side = self.model.side(SIDE_CONTEXT_TOKENS)
        prefix = self._prefix(side)
        status = side.ensure_prefix(prefix, state_dir)
        side.hold(self._head(side, prefix, self.prompt(tool, "")[len(prefix):]))
        return status

    @staticmethod
    def _prefix(side: AgentModel) -> str:
        """The check's own prefix: its system message with the worked examples, as rendered by the template."""
        marker = "\u0000Q\u0000"
        head = side.render(RelevanceCheck._messages(marker), None)
        return head[: head.index(marker)]

    def probability(self, tool: Tool, text: str, state_dir: Path | None = None) -> float:
        """P(yes); the examples' evaluated prefix is saved in `state_dir` (the agent's prompt cache) and loaded from
        there by the next process: a one-shot `hearthd ask` otherwise evaluated them first, ~3 s on 2 cores."""
        side = self.model.side(SIDE_CONTEXT_TOKENS)
        prefix = self._prefix(side)
        # The examples are the side context's own prefix (kept as a snapshot where the cache cannot rewind).
        rest = self.prompt(tool, text)[len(prefix):]
        room = side.room() - len(side.prefix_tokens(prefix)) - 8
        if len(side.tokens_special(rest)) > room:
            raise RequestTooLong(f"the request does not fit the relevance check's context ({room} tokens)")
        _, tokens = side.prompt_tokens(prefix, rest, state_dir)
        head = self._head(side, prefix, rest)
        if tokens[: len(head)] == head:
            side.hold(head)  # the examples and this tool's signature: kept, so the next check of it starts there
        logprobs = side.logprobs_after(tokens)
        yes = float(np.exp(logprobs[self._yes]).sum())
        no = float(np.exp(logprobs[self._no]).sum())
        return yes / (yes + no) if yes + no > 0 else 0.0
