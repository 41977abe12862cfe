"""What the turn that runs a tool's handler is about, set by the daemon and read by the tools: neither imports the
other for it (a handler's arguments are the model's; these are hearthd's own)."""

from __future__ import annotations

from contextvars import ContextVar

from .locale import DEFAULT_LANGUAGE

# The language of the turn that runs a handler: an alarm rings its label in the language it was set in, the clock
# says the time in that language's form.
turn_language: ContextVar[str] = ContextVar("turn_language", default=DEFAULT_LANGUAGE)
# Who asked in the turn that runs a handler: "" (this machine: its microphone, D-Bus, MQTT) or a satellite's name
# (daemon/satellites.py sets it); an alarm or a timer set then rings there.
turn_origin: ContextVar[str] = ContextVar("turn_origin", default="")
