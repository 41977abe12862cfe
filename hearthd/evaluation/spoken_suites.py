"""The spoken suites: each command of tests/data/spoken/<lang>.yaml said by its test voice (evaluation/voices.py) and
run through the chain as `hearthd run --input FILE --no-wake` runs it (cli.cmd_run: Pipeline.run_audio over the
daemon's Components: endpointing, whisper, the tiers, the policy), in the suites' home (tests/data/commands/
home.yaml, as `hearthd eval --suite --home` builds it), then judged as the typed suites are (Command.judge_decision).

The components are built once and reused for every utterance (models loaded once); each utterance is a conversation
of its own, so no question one of them leaves open is answered by the next. The home's tools are hearthd's real
declarations with handlers that are never run (SuiteHome): what is scored is the decision, and nothing is switched on
or locked by a benchmark. `run_cli` shells the same audio out to the real `hearthd run` for a spot-check.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..agent.agent import Decision
from ..agent.parsing import ToolCall
from ..audio.pcm import SAMPLE_RATE
from ..audio.tts import Speech
from ..config import Config, dump_toml
from ..daemon.components import Components
from ..daemon.policy import ConfirmationPolicy
from ..errors import HearthdError
from ..tools.registry import ToolRegistry, ToolResult
from .evaluate import Command, SuiteHome
from .voices import SpokenVoices


@dataclass
class Flags:
    """Which steps of understanding run: each can be switched off to measure what it brings."""

    bias: bool = True  # stt.bias: the home's words bias what whisper hears
    rescore: bool = True  # stt.rescore: a transcript the templates miss is weighed against their nearest sentences
    tolerant: bool = True  # agent.tolerant: the scored nearest-template tier
    domain_hint: bool = True  # agent.domain_hint: the model chooses within the domain the tiers point at
    lang_forced: bool = False  # the suite's language is given to whisper (else detected, as the product does)
    # each conversation has spoken the suite's language before (a household that speaks it): the language whisper
    # falls back to, and the window it is first heard in (else a new conversation, in general.language)
    household: bool = False


def spoken_config(base: Config, home: SuiteHome, flags: Flags) -> Config:
    """`base` for the spoken suites: no wake word (the audio holds only the command, as with --no-wake), the suites'
    floors and microphone room, the flags' steps, and nothing that reaches outside (notifications, the audit)."""
    cfg = copy.deepcopy(base)
    cfg.wake.enabled = False
    cfg.mqtt.floors = {k: list(v) for k, v in home.floors.items()}
    cfg.mqtt.aliases = dict(home.catalogue.aliases)
    cfg.general.area = home.here
    cfg.stt.bias = flags.bias
    cfg.stt.rescore = flags.rescore
    cfg.agent.tolerant = flags.tolerant
    cfg.agent.domain_hint = flags.domain_hint
    cfg.dbus.notifications = False
    cfg.policy.audit = False
    return cfg


class NotExecuted(HearthdError):
    """What a suite's tool answers when the chain calls it: the decision is scored, nothing is switched or locked."""

    code = "suite-not-executed"
    phrase_key = "error.tool_failed"


async def _scored_only(arguments: dict[str, Any]) -> ToolResult:
    raise NotExecuted("the spoken suites score decisions; their tools never run")


class Unspoken:
    """Voices that make no sound: the reply's text is kept, its speech (which nothing judges) costs no time."""

    def voice(self, lang: str) -> Unspoken:
        return self

    def synthesize(self, text: str, lang: str = "") -> Speech:
        return Speech(np.zeros(0, dtype=np.int16), SAMPLE_RATE)


class SuiteComponents(Components):
    """The daemon's components (models, router, policy, dialogues) acting in the suites' home: its device catalogue
    and hearthd's tool declarations over it, never executed, and replies that are not synthesised."""

    def __init__(self, cfg: Config, home: SuiteHome) -> None:
        super().__init__(cfg)
        self.home = home
        self.catalogue = home.catalogue
        self.tools = ToolRegistry(dataclasses.replace(t, handler=_scored_only) for t in home.registry)
        self.notifier = None
        self.voices = Unspoken()
        self.policy = ConfirmationPolicy(self.tools, cfg.policy.confirm, cfg.policy.confirm_timeout_s,
                                         confirm_many=cfg.policy.confirm_many, clock=self.ticks)


@dataclass
class Heard:
    """One spoken command: what whisper wrote, what the chain decided and by which tier, and whether it was right."""

    command: Command
    transcript: str
    heard_lang: str
    tier: str  # the decision's source (fastpath, tolerant, model, dialogue, ...), or "error"
    kind: str  # call | confirm (a call held for a yes) | clarify | abstain | error
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    ok: bool = False
    detail: str = ""  # the abstention's reason, the argument asked for, or the error's code
    ms: float = 0.0

    @property
    def action(self) -> str:
        """The action as a person reads it: `tool {arguments}`, or what was done instead."""
        if self.kind in ("call", "confirm"):
            said = "; ".join(f"{n} {json.dumps(a, ensure_ascii=False, sort_keys=True)}" for n, a in self.calls)
            return f"{said} (asks first)" if self.kind == "confirm" else said
        if self.kind == "clarify":
            name = self.calls[0][0] if self.calls else "?"
            return f"asks for {self.detail} ({name})"
        return f"{self.kind}: {self.detail}" if self.detail else self.kind

    def as_json(self) -> dict[str, Any]:
        c = self.command
        return {"type": "spoken_case", "lang": c.lang, "family": c.family, "text": c.text,
                "expected": {"tool": c.tool, "arguments": c.arguments, "clarify": c.clarify},
                "transcript": self.transcript, "heard_lang": self.heard_lang, "tier": self.tier, "kind": self.kind,
                "calls": [{"name": n, "arguments": a} for n, a in self.calls], "detail": self.detail, "ok": self.ok,
                "ms": round(self.ms, 1)}


def judged(command: Command, decision: Decision | None, held: bool, transcript: str, heard_lang: str,
           error: str, home: SuiteHome, ms: float) -> Heard:
    """A turn's outcome against the command's expectation. A turn that ended without a decision (no speech found,
    nothing recognised, a stage that failed) is wrong whatever was expected: the user heard only an apology."""
    if decision is None:
        return Heard(command, transcript, heard_lang, "error", "error", ok=False, detail=error or "no decision", ms=ms)
    calls = [(c.name, dict(c.arguments)) for c in decision.calls]
    kind = "confirm" if decision.kind == "call" and held else decision.kind
    detail = decision.missing if decision.kind == "clarify" else decision.reason if decision.kind == "abstain" else ""
    return Heard(command, transcript, heard_lang, decision.source or "?", kind, calls,
                 command.judge_decision(decision, home), detail, ms)


class SpokenRunner:
    """Says each command and runs it through the in-process chain, the components built once."""

    def __init__(self, cfg: Config, home: SuiteHome, voices: SpokenVoices, flags: Flags | None = None,
                 seed: int = 0) -> None:
        self.flags = flags or Flags()
        self.cfg = spoken_config(cfg, home, self.flags)
        self.home = home
        self.voices = voices
        self.seed = seed
        self.components = SuiteComponents(self.cfg, home)
        self._turns = 0

    def load(self) -> None:
        """Load what every turn needs before the first one is timed (whisper, the endpointer, the templates)."""
        self.components.stt()
        self.components.endpointer()
        self.components.warm_templates()

    async def hear(self, command: Command) -> Heard:
        from ..daemon.pipeline import Pipeline
        from ..events import EventType, Trace

        audio = self.voices.speak(command.text, command.lang, self.seed)
        trace = Trace()
        self._turns += 1
        self.components.router().reset()
        conversation = f"spoken-{command.lang}-{self._turns}"
        if self.flags.household:
            self.components.dialogues.get(conversation).lang = command.lang
        started = time.monotonic()
        result = await Pipeline(self.components, trace).run_audio(
            audio, language=command.lang if self.flags.lang_forced else None, conversation=conversation)
        ms = (time.monotonic() - started) * 1000
        held = bool(trace.of_type(EventType.CONFIRM_REQUEST))
        return judged(command, result.decision, held, result.transcript, result.lang, result.error, self.home, ms)

    async def hear_all(self, commands: Iterable[Command], on_heard: Callable[[Heard], None] | None = None
                       ) -> list[Heard]:
        out = []
        for command in commands:
            heard = await self.hear(command)
            out.append(heard)
            if on_heard:
                on_heard(heard)
        return out


# --- the real command, for a spot-check --------------------------------------------------------------------------


def write_home_state(home: SuiteHome, state_home: Path) -> None:
    """The suites' devices as the daemon's saved catalogue (<XDG_STATE_HOME>/hearthd/devices.json), so a separate
    `hearthd run` learns the same home it would have learned over MQTT."""
    saved = copy.copy(home.catalogue)
    saved.path = state_home / "hearthd" / "devices.json"
    saved.save()


def run_cli(command: Command, audio_path: Path, cfg: Config, home: SuiteHome, flags: Flags, work: Path,
            hearthd: list[str] | None = None) -> Heard:
    """`hearthd run --input FILE --no-wake --json` on one utterance, in a process of its own with the suites' home
    (a config file and a saved device catalogue in `work`), read back from its JSON trace."""
    config = work / "config.toml"
    if not config.is_file():
        config.write_text(dump_toml(spoken_config(cfg, home, flags)), encoding="utf-8")
        write_home_state(home, work / "state")
    argv = [*(hearthd or [sys.executable, "-m", "hearthd"]), "--config", str(config), "run", "--input",
            str(audio_path), "--no-wake", "--json", "--log-level", "error"]
    if flags.lang_forced:
        argv += ["--lang", command.lang]
    env = {**os.environ, "XDG_STATE_HOME": str(work / "state"), "HEARTHD_CONFIG": str(config)}
    started = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env, check=False)
    ms = (time.monotonic() - started) * 1000
    events = []
    for line in proc.stdout.splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    return judged(command, *decision_of(events), home, ms)


def decision_of(events: list[dict[str, Any]]) -> tuple[Decision | None, bool, str, str, str]:
    """(decision, held for a yes, transcript, language, error code) as a `hearthd run --json` trace tells them."""
    transcript = next((e for e in events if e.get("type") == "transcript"), {})
    errors = [e.get("code", "") for e in events if e.get("type") == "error"]
    text, lang = str(transcript.get("text", "")), str(transcript.get("lang", ""))
    for e in events:
        kind = e.get("type")
        if kind == "confirm_request":
            calls = [ToolCall(c["name"], c.get("arguments") or {}) for c in e.get("calls") or [e]]
            return Decision("call", calls=calls, source=str(e.get("source", "?"))), True, text, lang, ""
        if kind == "clarify" and e.get("source") != "tool":
            return (Decision("clarify", calls=[ToolCall(str(e.get("name", "")))], missing=str(e.get("missing", "")),
                             source=str(e.get("source", "?"))), False, text, lang, "")
        if kind == "abstain":
            return (Decision("abstain", reason=str(e.get("reason", "")), source=str(e.get("source", "?"))), False,
                    text, lang, "")
    made = [e for e in events if e.get("type") == "tool_call"]
    if made:
        return (Decision("call", calls=[ToolCall(c["name"], c.get("arguments") or {}) for c in made],
                         source=str(made[0].get("source", "?"))), False, text, lang, "")
    return None, False, text, lang, errors[0] if errors else "no decision in the trace"


def temporary_work() -> Path:
    return Path(tempfile.mkdtemp(prefix="hearthd-spoken-"))
