"""hearthd's own D-Bus interface, `org.hearthd.Assistant1` at /org/hearthd/Assistant1 on the session bus.

Desktop widgets, scripts and other programs ask hearthd things, make it speak, start a listening turn and mute
it; they follow what it does through signals. Every request goes through the same pipeline as speech, so a
consequential action asked over D-Bus still needs a yes (a second Ask("yes", "")) before it runs — from the same
connection: each sender (its unique bus name) is a conversation of its own, and another program's "yes" is a request
of its own, never the answer to this one's question.
"""

# No `from __future__ import annotations`: dbus-fast reads these annotations as D-Bus signatures at import.

import asyncio
import contextvars
import json
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from dbus_fast import DBusError, Message, MessageFlag, MessageType, PropertyAccess
from dbus_fast.annotations import DBusBool, DBusSignature, DBusStr
from dbus_fast.service import ServiceInterface, dbus_property, method, signal

from ..events import ErrorEvent, Event, ReplyEvent, ToolCallEvent, TranscriptEvent
from ..locale import phrase
from .mqtt import REQUEST_ID  # the same keys on both doors
from .pipeline import Pipeline, PipelineError, clean_text

log = logging.getLogger(__name__)

NAME = "org.hearthd.Assistant1"
PATH = "/org/hearthd/Assistant1"
STATES = ("idle", "listening", "thinking", "speaking")
ERROR_UNAVAILABLE = "org.hearthd.Assistant1.Error.NotAvailable"
ERROR_LANGUAGE = "org.hearthd.Assistant1.Error.UnknownLanguage"
ERROR_TEXT = "org.hearthd.Assistant1.Error.InvalidText"  # empty, or longer than agent.max_text_chars
ERROR_FAILED = "org.hearthd.Assistant1.Error.Failed"  # something unexpected; logged, the service goes on

# A bad language is said back at most this long: repeated whole (repr: up to 10 characters for one), a 34 MB language
# made an error of 136 MB, more than one D-Bus message may be (128 MiB): the caller got no reply at all.
SHOWN_CHARS = 40

TwoStrings = Annotated[list[str], DBusSignature("ss")]
Speaker = Callable[[str, str], Awaitable[None]]

# The unique bus name of the caller of the method being dispatched. dbus-fast does not hand a method its message:
# a message handler sets this just before the method's task is made, and the task starts with a copy of the context.
_caller: contextvars.ContextVar[str] = contextvars.ContextVar("hearthd_dbus_caller", default="")
# Whether that caller waits for the reply: a call sent NO_REPLY_EXPECTED (`dbus-send` without --print-reply) does not.
_replies: contextvars.ContextVar[bool] = contextvars.ContextVar("hearthd_dbus_replies", default=True)
METHODS = ("Ask", "AskWithId", "Say", "Listen", "Mute")


def note_caller(message: Message) -> bool:
    """A bus message handler: remember who calls and whether it waits for the reply. A call that waits for none and
    is not one of hearthd's own methods is dropped here (True: handled): the standard interfaces (Properties,
    Introspectable, Peer) only answer, or refuse (every property is read-only), and dbus-fast logged each refusal
    nobody would hear with a traceback, as many as any program on the bus cared to send."""
    if message.message_type != MessageType.METHOD_CALL:
        return False
    _caller.set(message.sender or "")
    replies = not message.flags & MessageFlag.NO_REPLY_EXPECTED
    _replies.set(replies)
    return not replies and not (message.interface in (NAME, None) and message.member in METHODS)


def conversation_of(sender: str) -> str:
    """The conversation of a D-Bus caller: one per connection (":1.42"); a caller in the process has its own."""
    return f"dbus:{sender or 'in-process'}"


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
        # Requests refused, by (method, reason): a bad language or text, no speaker, muted, and "internal" for what
        # failed unexpectedly (logged with its traceback). No request ends the service or keeps the turn lock.
        self.rejected: Counter[tuple[str, str]] = Counter()
        pipeline.trace.listen(self._on_event)

    # -- what the daemon reports ------------------------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        try:
            self._signal(event)
        except Exception:  # a signal that cannot be sent must not end the turn that emitted the event
            log.exception("D-Bus: cannot signal a %s event", event.type)

    def _signal(self, event: Event) -> None:
        if isinstance(event, TranscriptEvent):
            self.Transcript(event.text, event.lang)
        elif isinstance(event, ToolCallEvent):
            self.Action(event.name, json.dumps(event.arguments, ensure_ascii=False))
        elif isinstance(event, ReplyEvent):
            self.Reply(event.text, event.lang)

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
        if lang not in self.languages:  # said back in part: whole, its repr() could outgrow what D-Bus carries
            shown = lang if len(lang) <= SHOWN_CHARS else lang[:SHOWN_CHARS] + "…"
            raise DBusError(ERROR_LANGUAGE, f"language {shown!r} is not one of {', '.join(self.languages)}")
        return lang

    def _text(self, text: str) -> str:
        """The request's text cleaned (NUL/control characters dropped, lone surrogates replaced); too long or
        nothing left is an InvalidText error that says which."""
        limit = self.pipeline.cfg.agent.max_text_chars
        try:
            cleaned = clean_text(str(text), limit)
        except PipelineError as e:
            raise DBusError(ERROR_TEXT, e.message) from None
        if not cleaned.strip():
            raise DBusError(ERROR_TEXT, "the text is empty")
        return cleaned

    def _refused(self, member: str, e: Exception) -> DBusError:
        """A request that failed, counted by reason; the unexpected is logged with its traceback and becomes a
        Failed error (the service, its other clients and the next turn go on)."""
        if isinstance(e, DBusError):
            self.rejected[(member, e.type.rsplit(".", 1)[-1])] += 1
            return e
        self.rejected[(member, "internal")] += 1
        log.error("D-Bus %s failed (%d unexpected failures so far)", member,
                  sum(n for (_, why), n in self.rejected.items() if why == "internal"), exc_info=e)
        return DBusError(ERROR_FAILED, f"{member} failed: {type(e).__name__}: {e}")

    def _refuse(self, member: str, e: Exception) -> None:
        """Raise the error of a request that failed (`_refused`), unless its caller waits for no reply: then it is
        counted and logged at debug level only. Raised, dbus-fast logged it as an "unexpected exception" with its
        traceback: one for every fire-and-forget call with a bad text or language, or to Listen while headless."""
        error = self._refused(member, e)
        if _replies.get():
            raise error from None
        log.debug("D-Bus %s refused, and its caller waits for no reply: %s", member, error.text)

    # -- methods ------------------------------------------------------------------------------------------

    @method()
    async def Ask(self, text: DBusStr, lang: DBusStr) -> DBusStr:
        """Handle `text` as if it was spoken (lang "" = detect); returns the reply."""
        return await self._ask("Ask", text, lang, None)

    @method()
    async def AskWithId(self, text: DBusStr, lang: DBusStr, request_id: DBusStr) -> DBusStr:
        """Ask, with the request's idempotency key: the same request sent again with it (a client retrying after
        it lost the reply, from a new connection too) is answered again, and what it did is not done again."""
        return await self._ask("AskWithId", text, lang, request_id)

    async def _ask(self, member: str, text: str, lang: str, request_id: str | None) -> str:
        try:
            language = self._language(lang)
            text = self._text(text)
            if request_id is not None and not REQUEST_ID.fullmatch(request_id):
                raise DBusError(ERROR_TEXT, "request_id: 1 to 64 of A-Z a-z 0-9 . _ : @ -, a letter or digit first")
        except DBusError as e:
            self._refuse(member, e)
            return ""
        conversation, asked = conversation_of(_caller.get()), time.monotonic()
        try:
            async with self._turns:
                self.set_state("thinking")
                try:
                    result = await self.pipeline.run_text(text, language=language, conversation=conversation,
                                                          request_id=f"dbus:{request_id}" if request_id else None,
                                                          asked_at=asked)
                finally:
                    self.set_state("idle")
        except Exception as e:  # the turn ended unexpectedly: the asker hears the apology, as a speaker would
            self._refused(member, e)
            spoken = language or self.pipeline.c.last_lang or self.pipeline.cfg.general.language
            self.pipeline.trace.emit(ErrorEvent(code="internal", message=f"D-Bus Ask: {type(e).__name__}: {e}"))
            apology = phrase(spoken, "error.internal")
            self.Reply(apology, spoken)
            return apology
        self.emit_properties_changed({"Language": self.pipeline.c.last_lang or ""})
        return result.reply

    @method()
    async def Say(self, text: DBusStr, lang: DBusStr) -> None:
        """Speak `text` in `lang` (announcements)."""
        try:
            language = self._language(lang) or self.pipeline.cfg.general.language
            text = self._text(text)
            if self.speak_hook is None:
                raise DBusError(ERROR_UNAVAILABLE, "no speaker: hearthd runs headless")
            self.Reply(text, language)
            self.set_state("speaking")
            try:
                await self.speak_hook(text, language)
            finally:
                self.set_state("idle")
        except Exception as e:
            self._refuse("Say", e)

    @method()
    def Listen(self) -> None:
        """Start a listening turn, as if the wake word was heard."""
        try:
            if self._muted:
                raise DBusError(ERROR_UNAVAILABLE, "hearthd is muted")
            if self.listen_hook is None:
                raise DBusError(ERROR_UNAVAILABLE, "no microphone: hearthd runs headless")
            self.listen_hook()
        except Exception as e:
            self._refuse("Listen", e)

    @method()
    def Mute(self, muted: DBusBool) -> None:
        """Muted: the wake word and Listen() are ignored until unmuted."""
        try:
            self.set_muted(bool(muted))
        except Exception as e:
            self._refuse("Mute", e)

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
    bus.add_message_handler(note_caller)  # Ask reads who calls: each sender is its own conversation
    bus.export(PATH, assistant)
    reply = await bus.request_name(NAME, NameFlag.DO_NOT_QUEUE)
    if reply not in (RequestNameReply.PRIMARY_OWNER, RequestNameReply.ALREADY_OWNER):
        bus.disconnect()
        raise ServiceFailed(NAME, "name-taken", f"{NAME} is already owned on this bus ({reply.name})")
    return bus, assistant
