"""The daemon's log: Python logging to stderr, which journald collects when systemd runs hearthd.

Under journald ($JOURNAL_STREAM names stderr) lines carry a syslog priority prefix ("<6>") instead of a
timestamp: the journal stamps every line itself and files it at that priority (`journalctl -p warning`).
Trace events reach the log too: the daemon's life (ready, reload, alarms) at INFO, errors as warnings, and
what was said, done and answered only at DEBUG and, in `general.privacy` mode, without the words.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from typing import TextIO

from ..config import GeneralConfig
from ..events import (
    AlarmEvent,
    AlarmMissedEvent,
    ErrorEvent,
    Event,
    Listener,
    ModelEvent,
    ReadyEvent,
    ReloadEvent,
    ReplyEvent,
    TimingEvent,
    ToolCallEvent,
    ToolResultEvent,
    TranscriptEvent,
)

LEVELS = ("debug", "info", "warning", "error")
_PRIORITY = {logging.DEBUG: 7, logging.INFO: 6, logging.WARNING: 4, logging.ERROR: 3, logging.CRITICAL: 2}

events_log = logging.getLogger("hearthd.events")


class JournalFormatter(logging.Formatter):
    """`<priority>logger: message`, the form journald parses from a stream (SyslogLevelPrefix=yes)."""

    def format(self, record: logging.LogRecord) -> str:
        prio = _PRIORITY.get(record.levelno, 6 if record.levelno < logging.WARNING else 3)
        return "\n".join(f"<{prio}>{line}" for line in super().format(record).splitlines())


def is_journal(stream: TextIO) -> bool:
    """True when `stream` is the journal stream systemd handed us ($JOURNAL_STREAM is "device:inode")."""
    dev, _, ino = os.environ.get("JOURNAL_STREAM", "").partition(":")
    try:
        st = os.fstat(stream.fileno())
        return bool(dev and ino) and (st.st_dev, st.st_ino) == (int(dev), int(ino))
    except (OSError, ValueError, AttributeError):
        return False


def configure_logging(level: str = "info", stream: TextIO | None = None) -> None:
    """Root logging to `stream` (stderr) at `level`; replaces handlers set before (a second call reconfigures)."""
    stream = stream or sys.stderr
    handler = logging.StreamHandler(stream)
    if is_journal(stream):
        handler.setFormatter(JournalFormatter("%(name)s: %(message)s"))
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())


def _words(text: object, general: GeneralConfig) -> str:
    return f"<{len(str(text))} chars>" if general.privacy else repr(text)


def log_events(general: GeneralConfig) -> Listener:
    """Trace events → the log. `general` is read at each event, so a reload that turns privacy on applies at once."""

    def on_event(event: Event) -> None:
        match event:
            case ErrorEvent():
                events_log.warning("%s: %s", event.code, event.message)
            case ReadyEvent() | ReloadEvent() | AlarmMissedEvent():
                shown = {k: v for k, v in event.payload().items() if not (general.privacy and k in ("text", "label"))}
                events_log.info("%s %s", event.type, json.dumps(shown, ensure_ascii=False, default=str))
            case AlarmEvent():
                label = "" if general.privacy else f" {event.label!r}"
                events_log.info("%s %s rings (%s)%s", event.kind, event.id, event.count, label)
            case TranscriptEvent() | ReplyEvent():
                events_log.debug("%s [%s] %s", event.type, event.lang, _words(event.text, general))
            case ToolCallEvent():
                args = "" if general.privacy else " " + json.dumps(event.arguments, ensure_ascii=False)
                events_log.debug("tool_call %s%s (%s)", event.name, args, event.source)
            case ToolResultEvent():
                events_log.debug("tool_result %s %s", event.name, "ok" if event.ok else "failed")
            case ModelEvent():
                events_log.debug("model %s tokens evaluated (prefix %s)", event.evaluated, event.prefix)
            case TimingEvent():
                events_log.debug("timing %s %s ms", event.stage, event.ms)

    return on_event
