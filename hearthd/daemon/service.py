"""hearthd's own D-Bus interface, `org.hearthd.Assistant1` at /org/hearthd/Assistant1 on the session bus.

Desktop widgets, scripts and other programs ask hearthd things, make it speak, start a listening turn and mute
it; they follow what it does through signals. Every request goes through the same pipeline as speech, so a
consequential action asked over D-Bus still needs a yes (a second Ask("yes", "")) before it runs.
"""

# No `from __future__ import annotations`: dbus-fast reads these annotations as D-Bus signatures at import.

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from dbus_fast import DBusError, PropertyAccess
from dbus_fast.annotations import DBusBool, DBusSignature, DBusStr
from dbus_fast.service import ServiceInterface, dbus_property, method, signal

from ..events import Event, EventType
from .pipeline import Pipeline

log = logging.getLogger(__name__)

NAME = "org.hearthd.Assistant1"
PATH = "/org/hearthd/Assistant1"
STATES = ("idle", "listening", "thinking", "speaking")
ERROR_UNAVAILABLE = "org.hearthd.Assistant1.Error.NotAvailable"
ERROR_LANGUAGE = "org.hearthd.Assistant1.Error.UnknownLanguage"

TwoStrings = Annotated[list[str], DBusSignature("ss")]
Speaker = Callable[[str, str], Awaitable[None]]


class Assistant(ServiceInterface):
    """The interface object; `listen` and `speak` are the live loop's (absent in headless mode)."""

    def __init__(self, pipeline: Pipeline, languages: list[str], listen: Callable[[], None] | None = None,
                 speak: Speaker | None = None, turns: asyncio.Lock | None = None) -> None:
        super().__init__(NAME)
        self.pipeline = pipeline
        self.languages = languages
        self.listen_hook = listen
        self.speak_hook = speak
        self._state = "idle"
        self._muted = False
        self.on_mute: Callable[[bool], None] | None = None  # the live loop's, so Mute() silences the microphone
        self._turns = turns or asyncio.Lock()  # one turn at a time: a pending confirmation belongs to the next Ask
        pipeline.trace.listen(self._on_event)

    # -- what the daemon reports ------------------------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        f = event.fields
        if event.type == EventType.TRANSCRIPT:
            self.Transcript(str(f.get("text", "")), str(f.get("lang", "")))
        elif event.type == EventType.TOOL_CALL:
            self.Action(str(f.get("name", "")), json.dumps(f.get("arguments", {}), ensure_ascii=False))
        elif event.type == EventType.REPLY:
            self.Reply(str(f.get("text", "")), str(f.get("lang", "")))

    def set_state(self, state: str) -> None:
        if state not in STATES:
            raise ValueError(state)
        if state != self._state:
            self._state = state
            self.emit_properties_changed({"State": state})

    @property
    def muted(self) -> bool:
        return self._muted

    def _language(self, lang: str) -> str | None:
        if not lang:
            return None
        if lang not in self.languages:
            raise DBusError(ERROR_LANGUAGE, f"language {lang!r} is not one of {', '.join(self.languages)}")
        return lang

    # -- methods ------------------------------------------------------------------------------------------

    @method()
    async def Ask(self, text: DBusStr, lang: DBusStr) -> DBusStr:
        """Handle `text` as if it was spoken (lang "" = detect); returns the reply."""
        language = self._language(lang)
        async with self._turns:
            self.set_state("thinking")
            try:
                result = await self.pipeline.run_text(text, language=language)
            finally:
                self.set_state("idle")
        self.emit_properties_changed({"Language": self.pipeline.c.last_lang or ""})
        return result.reply

    @method()
    async def Say(self, text: DBusStr, lang: DBusStr) -> None:
        """Speak `text` in `lang` (announcements)."""
        language = self._language(lang) or self.pipeline.cfg.general.language
        if self.speak_hook is None:
            raise DBusError(ERROR_UNAVAILABLE, "no speaker: hearthd runs headless")
        self.Reply(text, language)
        self.set_state("speaking")
        try:
            await self.speak_hook(text, language)
        finally:
            self.set_state("idle")

    @method()
    def Listen(self) -> None:
        """Start a listening turn, as if the wake word was heard."""
        if self._muted:
            raise DBusError(ERROR_UNAVAILABLE, "hearthd is muted")
        if self.listen_hook is None:
            raise DBusError(ERROR_UNAVAILABLE, "no microphone: hearthd runs headless")
        self.listen_hook()

    @method()
    def Mute(self, muted: DBusBool) -> None:
        """Muted: the wake word and Listen() are ignored until unmuted."""
        self.set_muted(bool(muted))

    def set_muted(self, muted: bool) -> None:
        if muted != self._muted:
            self._muted = muted
            self.emit_properties_changed({"Muted": self._muted})
            if self.on_mute is not None:
                self.on_mute(muted)

    # -- signals ------------------------------------------------------------------------------------------

    @signal()
    def Transcript(self, text: str, lang: str) -> TwoStrings:
        return [text, lang]

    @signal()
    def Action(self, name: str, arguments: str) -> TwoStrings:
        return [name, arguments]

    @signal()
    def Reply(self, text: str, lang: str) -> TwoStrings:
        return [text, lang]

    # -- properties ---------------------------------------------------------------------------------------

    @dbus_property(access=PropertyAccess.READ)
    def State(self) -> DBusStr:
        return self._state

    @dbus_property(access=PropertyAccess.READ)
    def Language(self) -> DBusStr:
        return self.pipeline.c.last_lang or self.pipeline.cfg.general.language

    @dbus_property(access=PropertyAccess.READ)
    def Muted(self) -> DBusBool:
        return self._muted


async def export(pipeline: Pipeline, address: str = "", listen: Callable[[], None] | None = None,
                 speak: Speaker | None = None, turns: asyncio.Lock | None = None) -> tuple[Any, Assistant]:
    """Connect to the session bus (or `address`), export the interface and own the name; raises
    ServiceMissing when there is no bus and ServiceFailed when another hearthd owns the name."""
    from dbus_fast import NameFlag, RequestNameReply
    from dbus_fast.aio import MessageBus

    from ..tools.bus import ServiceFailed, ServiceMissing

    try:
        bus = await MessageBus(bus_address=address or None).connect()
    except Exception as e:
        raise ServiceMissing("session bus", f"cannot connect ({type(e).__name__}: {e})") from None
    assistant = Assistant(pipeline, list(pipeline.cfg.stt.languages), listen, speak, turns)
    bus.export(PATH, assistant)
    reply = await bus.request_name(NAME, NameFlag.DO_NOT_QUEUE)
    if reply not in (RequestNameReply.PRIMARY_OWNER, RequestNameReply.ALREADY_OWNER):
        bus.disconnect()
        raise ServiceFailed(NAME, "name-taken", f"{NAME} is already owned on this bus ({reply.name})")
    return bus, assistant
