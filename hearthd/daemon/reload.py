"""Applying a re-read config to the running daemon (SIGHUP, `systemctl reload hearthd`).

Settings that parts already built read on every use change at once: fields are replaced in place, section by
section, so everything holding `components.cfg` or one of its sections sees the new values, and the few parts
that copied a value when they were built (the confirmation policy, the router, the agent, the alarm book, the
scheduler, the audit log, the MQTT link) are updated too. Everything else (models, audio devices, buses, the
broker) needs a restart: such changes are reported, not applied, so the running config stays what is in effect.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from ..config import Config
from .components import Components
from .scheduler import Scheduler

# section -> keys applied live; None: every key of the section
LIVE: dict[str, tuple[str, ...] | None] = {
    "general": ("language", "privacy"),
    "policy": ("confirm", "confirm_timeout_s", "audit_max_bytes", "audit_keep"),
    "alarms": None,
    "agent": ("max_tokens", "temperature", "min_tool_probability", "min_relevance", "min_relevance_grounded",
              "fast_path", "tolerant", "tolerant_act", "tolerant_ask", "domain_hint", "clarify_timeout_s",
              "clarify_turns", "max_calls", "max_turn_s", "thinking"),
}


@dataclass
class Reloaded:
    """What a reload changed (`changed`) and what differs but waits for a restart (`restart`), as dotted keys."""

    changed: list[str] = field(default_factory=list)
    restart: list[str] = field(default_factory=list)


def _is_live(section: str, key: str) -> bool:
    keys = LIVE.get(section, ())
    return keys is None or key in keys


def apply_config(components: Components, new: Config, scheduler: Scheduler | None = None) -> Reloaded:
    """Bring the running daemon to `new` as far as it can change live."""
    cfg = components.cfg
    out = Reloaded()
    for sect in dataclasses.fields(cfg):
        if sect.metadata.get("internal"):
            continue
        current, wanted = getattr(cfg, sect.name), getattr(new, sect.name)
        if not dataclasses.is_dataclass(current):  # a list of tables ([[satellites]]): changed as a whole
            if current != wanted:
                out.restart.append(sect.name)
            continue
        for f in dataclasses.fields(current):
            if getattr(current, f.name) == getattr(wanted, f.name):
                continue
            key = f"{sect.name}.{f.name}"
            if _is_live(sect.name, f.name):
                setattr(current, f.name, getattr(wanted, f.name))
                out.changed.append(key)
            else:
                out.restart.append(key)
    cfg.source = new.source
    _propagate(components, scheduler)
    if components._cache.get("agent") is not None and any(
            k.startswith("agent.") or k == "general.language" for k in out.changed):
        _prepare_again(components)
    return out


def _prepare_again(c: Components) -> None:
    """The prompt prefixes of the new settings (language, thinking, checks) made ready beside the next turns,
    which go first: a turn after a reload does not pay for them."""
    import asyncio
    import contextlib

    with contextlib.suppress(RuntimeError):  # no event loop (a one-shot command): the first turn prepares it
        asyncio.get_running_loop().run_in_executor(None, c.prepare_model)


def _propagate(c: Components, scheduler: Scheduler | None) -> None:
    """The values that parts copied when they were built."""
    cfg = c.cfg
    c.alarms.snooze_minutes = cfg.alarms.snooze_minutes
    if scheduler is not None:
        scheduler.grace = timedelta(seconds=cfg.alarms.grace_s)
        scheduler.repeat = timedelta(seconds=cfg.alarms.repeat_s)
        scheduler.max_rings = cfg.alarms.max_rings
    c.policy.extra = set(cfg.policy.confirm)
    c.policy.timeout = cfg.policy.confirm_timeout_s
    if c.audit is not None:
        c.audit.privacy = cfg.general.privacy
        c.audit.max_bytes = cfg.policy.audit_max_bytes
        c.audit.keep = cfg.policy.audit_keep
    if c.mqtt is not None:
        c.mqtt.privacy = cfg.general.privacy
    # Built only once a turn needed them; a part not built yet reads the new config when it is.
    built: dict[str, Any] = c._cache
    router = built.get("router")
    if router is not None:
        router.clarify_timeout = cfg.agent.clarify_timeout_s
        router.clarify_turns = cfg.agent.clarify_turns
        if cfg.agent.fast_path != (router.fast_path is not None):
            router.fast_path = c.fast_path() if cfg.agent.fast_path else None
        router.domain_hint = cfg.agent.domain_hint
        if router.fast_path is None or not cfg.agent.tolerant:
            router.tolerant = None
        else:
            from ..agent.tolerant import TolerantMatcher

            if router.tolerant is None or router.tolerant.fast_path is not router.fast_path:
                router.tolerant = TolerantMatcher(router.fast_path)
            router.tolerant.act, router.tolerant.ask = cfg.agent.tolerant_act, cfg.agent.tolerant_ask
    agent = built.get("agent")
    if agent is not None:
        agent.min_tool_probability = cfg.agent.min_tool_probability
        agent.min_relevance = cfg.agent.min_relevance
        agent.min_relevance_grounded = cfg.agent.min_relevance_grounded
        agent.max_calls = cfg.agent.max_calls
        agent.max_turn_s = cfg.agent.max_turn_s
        agent.thinking = cfg.agent.thinking_budget if agent.model.capabilities.thinking else 0
        if cfg.agent.min_relevance > 0 and agent._relevance is None:  # it was built with the check off
            from ..agent.relevance import RelevanceCheck

            agent._relevance = RelevanceCheck(agent.model)
